// Where a DCT-scaled (1/8) libjpeg-turbo decode of a phone JPEG spends its time: the whole decode to RGB at 1/8, against
// jpeg_read_coefficients (the entropy decoding of every coefficient, nothing else: no IDCT, no colour conversion), best
// of RUNS each, same file in memory. The 1/8 decode skips storing the AC coefficients it does not need but must still
// Huffman-decode them, so the coefficient read is an upper bound on its entropy share.
//   clang -O2 tools/decode-split/split.c -ljpeg -o /tmp/split && /tmp/split FILE.jpg [RUNS]
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <jpeglib.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s FILE.jpg [RUNS]\n", argv[0]); return 2; }
    int runs = argc > 2 ? atoi(argv[2]) : 20;
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(size);
    if (fread(data, 1, size, f) != (size_t)size) { fprintf(stderr, "short read\n"); return 1; }
    fclose(f);
    double bestScaled = 1e9, bestCoef = 1e9;
    int ow = 0, oh = 0;
    for (int r = 0; r < runs; r++) {
        struct jpeg_decompress_struct c;
        struct jpeg_error_mgr e;
        c.err = jpeg_std_error(&e);
        double t0 = now();
        jpeg_create_decompress(&c);
        jpeg_mem_src(&c, data, size);
        jpeg_read_header(&c, TRUE);
        c.scale_num = 1; c.scale_denom = 8; c.out_color_space = JCS_RGB;
        jpeg_start_decompress(&c);
        ow = c.output_width; oh = c.output_height;
        unsigned char *row = malloc((size_t)ow * 3);
        while (c.output_scanline < c.output_height) jpeg_read_scanlines(&c, &row, 1);
        jpeg_finish_decompress(&c);
        jpeg_destroy_decompress(&c);
        free(row);
        double t1 = now();
        jpeg_create_decompress(&c);
        jpeg_mem_src(&c, data, size);
        jpeg_read_header(&c, TRUE);
        jpeg_read_coefficients(&c);
        jpeg_finish_decompress(&c);
        jpeg_destroy_decompress(&c);
        double t2 = now();
        if (t1 - t0 < bestScaled) bestScaled = t1 - t0;
        if (t2 - t1 < bestCoef) bestCoef = t2 - t1;
    }
    printf("%s: 1/8 decode to %dx%d RGB %.2f ms; entropy decoding alone (jpeg_read_coefficients) %.2f ms (%.0f %%)\n",
           argv[1], ow, oh, bestScaled * 1e3, bestCoef * 1e3, 100 * bestCoef / bestScaled);
    free(data);
    return 0;
}
