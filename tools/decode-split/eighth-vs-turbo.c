// Our 1/8 decoder (Sources/CImageShims/fm_jpeg_eighth.c, compiled with the package's C flags) against libjpeg-turbo's
// 1/8 decode of the same bytes in one program, best of RUNS each, file in memory; with a second build of our decoder
// (BEFORE, another commit's fm_jpeg_eighth.c with its entry point renamed) when given. Checks the pixels are the same.
// Run through tools/decode-split/eighth-vs-turbo.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jpeglib.h>   // after stdio.h: it uses FILE and size_t

int fm_jpeg_decode_eighth_fast(const uint8_t *, size_t, uint8_t *, size_t, uint32_t *, uint32_t *);
#ifdef BEFORE
int before_eighth(const uint8_t *, size_t, uint8_t *, size_t, uint32_t *, uint32_t *);
#endif

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }

// A libjpeg-turbo decompressor on `data`, header read, set to 1/8.
static void turbo_start(struct jpeg_decompress_struct *c, struct jpeg_error_mgr *e, const uint8_t *data, size_t size) {
    c->err = jpeg_std_error(e);
    jpeg_create_decompress(c);
    jpeg_mem_src(c, data, (unsigned long)size);
    jpeg_read_header(c, TRUE);
    c->scale_num = 1;
    c->scale_denom = 8;
}

static void turbo(const uint8_t *data, size_t size, uint8_t *out) {
    struct jpeg_decompress_struct c;
    struct jpeg_error_mgr e;
    turbo_start(&c, &e, data, size);
    c.out_color_space = JCS_RGB;
    jpeg_start_decompress(&c);
    while (c.output_scanline < c.output_height) {
        uint8_t *row = out + (size_t)c.output_scanline * c.output_width * 3;
        jpeg_read_scanlines(&c, &row, 1);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s RUNS FILE.jpg...\n", argv[0]); return 2; }
    int runs = atoi(argv[1]);
    for (int f = 2; f < argc; f++) {
        FILE *fp = fopen(argv[f], "rb");
        if (!fp) { perror(argv[f]); return 1; }
        fseek(fp, 0, SEEK_END);
        long n = ftell(fp);
        fseek(fp, 0, SEEK_SET);
        uint8_t *data = malloc((size_t)n);
        if (fread(data, 1, (size_t)n, fp) != (size_t)n) { fprintf(stderr, "short read\n"); return 1; }
        fclose(fp);
        struct jpeg_decompress_struct c;
        struct jpeg_error_mgr e;
        turbo_start(&c, &e, data, (size_t)n);
        jpeg_calc_output_dimensions(&c);
        size_t size = (size_t)c.output_width * c.output_height * 3;
        jpeg_destroy_decompress(&c);
        uint8_t *ref = malloc(size), *ours = malloc(size), *old = malloc(size);
        uint32_t w, h;
        double best_turbo = 1e9, best_ours = 1e9, best_before = 1e9;
        int same = 1;
        for (int r = 0; r < runs; r++) {
            double t = now();
            turbo(data, (size_t)n, ref);
            t = now() - t;
            if (t < best_turbo) best_turbo = t;
            t = now();
            int ok = fm_jpeg_decode_eighth_fast(data, (size_t)n, ours, size, &w, &h);
            t = now() - t;
            if (t < best_ours) best_ours = t;
            same &= ok && memcmp(ref, ours, size) == 0;
#ifdef BEFORE
            t = now();
            ok = before_eighth(data, (size_t)n, old, size, &w, &h);
            t = now() - t;
            if (t < best_before) best_before = t;
            same &= ok && memcmp(ref, old, size) == 0;
#endif
        }
        const char *name = strrchr(argv[f], '/') ? strrchr(argv[f], '/') + 1 : argv[f];
        printf("%-20s libjpeg-turbo %6.2f ms   ours %6.2f ms (%.3fx)", name, best_turbo, best_ours, best_ours / best_turbo);
#ifdef BEFORE
        printf("   before %6.2f ms (%.3fx)", best_before, best_before / best_turbo);
#endif
        printf("   same pixels: %s\n", same ? "yes" : "NO");
        free(data); free(ref); free(ours); free(old);
    }
    return 0;
}
