#ifndef FM_PANELS_H
#define FM_PANELS_H
// The panel layout both reduced-precision GEMMs share with FoodVision's FP32 kernels: 32 output channels per panel,
// a remainder of at most 16 in a panel of 16 (most layers have N = 16 mod 32).
#define FM_NR 32
#define FM_MR 8

static inline int fm_panel_width(int n, int panel) {
    int full = n / FM_NR, rem = n % FM_NR;
    return (panel == full && rem > 0 && rem <= FM_NR / 2) ? FM_NR / 2 : FM_NR;
}

static inline int fm_panel_count(int n) { return (n + FM_NR - 1) / FM_NR; }

#endif
