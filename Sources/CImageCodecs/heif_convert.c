// The HEIF shim's planes and colour conversions (heif_convert.h). Invariants: every plane's rows
// are `stride` bytes apart and hold `width * bytes` bytes; a function that makes a new plane frees
// the old one only once the new one is whole, and returns 0 (the old one kept) when memory runs out.
#include "heif_convert.h"

#include <stdlib.h>
#include <string.h>

// libheif's conversions are compiled without fused multiply-adds (the baseline x86-64 has none);
// ours must round as theirs do.
#pragma STDC FP_CONTRACT OFF

// MARK: Planes

void nr_plane_free(struct nr_plane *plane) {
    if (plane->owned) {
        free(plane->data);
    }
    plane->data = NULL;
    plane->owned = 0;
}

int nr_plane_alloc(struct nr_plane *plane, uint32_t width, uint32_t height, uint32_t bytes) {
    plane->data = NULL;
    plane->owned = 1;
    plane->width = width;
    plane->height = height;
    plane->bytes = bytes;
    plane->stride = (size_t)width * bytes;
    if (width == 0 || height == 0 || SIZE_MAX / plane->stride < height) {
        return 0;
    }
    plane->data = malloc(plane->stride * height);
    return plane->data != NULL;
}


int nr_plane_crop(struct nr_plane *plane, uint32_t left, uint32_t top, uint32_t right, uint32_t bottom) {
    struct nr_plane out;
    if (!nr_plane_alloc(&out, right - left + 1, bottom - top + 1, plane->bytes)) {
        return 0;
    }
    for (uint32_t y = 0; y < out.height; y++) {
        memcpy(out.data + y * out.stride, plane->data + (top + y) * plane->stride + (size_t)left * plane->bytes,
            out.stride);
    }
    nr_plane_free(plane);
    *plane = out;
    return 1;
}

/// The side of the blocks a rotation copies, so that its strided reads stay in the cache.
#define NR_ROTATE_BLOCK 32u

/// A counter-clockwise rotation of pixels of `BYTES`, block by block of the output: output
/// (x, y) is input (y, h - 1 - x) at 270 degrees, (w - 1 - x, h - 1 - y) at 180, (w - 1 - y, x)
/// at 90.
#define NR_ROTATE(BYTES)                                                                                        \
    for (uint32_t by = 0; by < out.height; by += NR_ROTATE_BLOCK) {                                            \
        uint32_t y_end = out.height - by < NR_ROTATE_BLOCK ? out.height : by + NR_ROTATE_BLOCK;                \
        for (uint32_t bx = 0; bx < out.width; bx += NR_ROTATE_BLOCK) {                                         \
            uint32_t x_end = out.width - bx < NR_ROTATE_BLOCK ? out.width : bx + NR_ROTATE_BLOCK;              \
            for (uint32_t y = by; y < y_end; y++) {                                                           \
                uint8_t *to = out.data + y * out.stride + (size_t)bx * (BYTES);                               \
                const uint8_t *from;                                                                          \
                ptrdiff_t step;                                                                               \
                if (angle == 270) {                                                                           \
                    from = plane->data + (h - 1 - bx) * plane->stride + (size_t)y * (BYTES);                  \
                    step = -(ptrdiff_t)plane->stride;                                                         \
                } else if (angle == 180) {                                                                    \
                    from = plane->data + (h - 1 - y) * plane->stride + (size_t)(w - 1 - bx) * (BYTES);        \
                    step = -(ptrdiff_t)(BYTES);                                                               \
                } else {                                                                                      \
                    from = plane->data + bx * plane->stride + (size_t)(w - 1 - y) * (BYTES);                  \
                    step = (ptrdiff_t)plane->stride;                                                          \
                }                                                                                             \
                for (uint32_t x = bx; x < x_end; x++, to += (BYTES)) {                                        \
                    memcpy(to, from + (ptrdiff_t)(x - bx) * step, (BYTES));                                   \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
    }

int nr_plane_rotate(struct nr_plane *plane, int angle) {
    if (angle == 0) {
        return 1;
    }
    uint32_t w = plane->width, h = plane->height;
    struct nr_plane out;
    if (!nr_plane_alloc(&out, angle == 180 ? w : h, angle == 180 ? h : w, plane->bytes)) {
        return 0;
    }
    switch (plane->bytes) {
    case 1: NR_ROTATE(1) break;
    case 3: NR_ROTATE(3) break;
    default: NR_ROTATE(4) break;
    }
    nr_plane_free(plane);
    *plane = out;
    return 1;
}
#undef NR_ROTATE

void nr_plane_mirror(struct nr_plane *plane, int horizontal) {
    uint8_t pixel[8];
    uint32_t w = plane->width, h = plane->height, bytes = plane->bytes;
    if (horizontal) {
        for (uint32_t y = 0; y < h; y++) {
            uint8_t *row = plane->data + y * plane->stride;
            for (uint32_t x = 0; x < w / 2; x++) {
                memcpy(pixel, row + (size_t)x * bytes, bytes);
                memcpy(row + (size_t)x * bytes, row + (size_t)(w - 1 - x) * bytes, bytes);
                memcpy(row + (size_t)(w - 1 - x) * bytes, pixel, bytes);
            }
        }
    } else {
        for (uint32_t y = 0; y < h / 2; y++) {
            uint8_t *top = plane->data + y * plane->stride, *bottom = plane->data + (h - 1 - y) * plane->stride;
            for (size_t x = 0; x < (size_t)w * bytes; x++) {
                uint8_t swap = top[x];
                top[x] = bottom[x];
                bottom[x] = swap;
            }
        }
    }
}

// MARK: Colour conversions

int nr_upsample_420_bilinear(struct nr_plane *chroma, uint32_t width, uint32_t height) {
    struct nr_plane out;
    if (chroma->width < (width + 1) / 2 || chroma->height < (height + 1) / 2
        || !nr_plane_alloc(&out, width, height, 1)) {
        return 0;
    }
    const uint8_t *c = chroma->data;
    size_t cs = chroma->stride;
    uint8_t *o = out.data;
    size_t os = out.stride;
    uint32_t w = width, h = height;
    o[0] = c[0];
    for (uint32_t cx = 0; cx < (w - 1) / 2; cx++) {
        o[2 * cx + 1] = (uint8_t)((3 * c[cx] + c[cx + 1] + 2) / 4);
        o[2 * cx + 2] = (uint8_t)((c[cx] + 3 * c[cx + 1] + 2) / 4);
    }
    if (w % 2 == 0) {
        o[w - 1] = c[w / 2 - 1];
    }
    for (uint32_t cy = 0; cy < (h - 1) / 2; cy++) {
        o[(2 * cy + 1) * os] = (uint8_t)((3 * c[cy * cs] + c[(cy + 1) * cs] + 2) / 4);
        o[(2 * cy + 2) * os] = (uint8_t)((c[cy * cs] + 3 * c[(cy + 1) * cs] + 2) / 4);
    }
    if (h % 2 == 0) {
        o[(h - 1) * os] = c[(h / 2 - 1) * cs];
    }
    if (w % 2 == 0) {
        for (uint32_t cy = 0; cy < (h - 1) / 2; cy++) {
            const uint8_t *a = c + cy * cs + w / 2 - 1, *b = c + (cy + 1) * cs + w / 2 - 1;
            o[(2 * cy + 1) * os + w - 1] = (uint8_t)((3 * *a + *b + 2) / 4);
            o[(2 * cy + 2) * os + w - 1] = (uint8_t)((*a + 3 * *b + 2) / 4);
        }
    }
    if (h % 2 == 0) {
        const uint8_t *row = c + (h / 2 - 1) * cs;
        for (uint32_t cx = 0; cx < (w - 1) / 2; cx++) {
            o[(h - 1) * os + 2 * cx + 1] = (uint8_t)((3 * row[cx] + row[cx + 1] + 2) / 4);
            o[(h - 1) * os + 2 * cx + 2] = (uint8_t)((row[cx] + 3 * row[cx + 1] + 2) / 4);
        }
    }
    if (w % 2 == 0 && h % 2 == 0) {
        o[(h - 1) * os + w - 1] = c[(h / 2 - 1) * cs + w / 2 - 1];
    }
    for (uint32_t y = 1; y + 1 < h; y += 2) {
        for (uint32_t x = 1; x + 1 < w; x += 2) {
            const uint8_t *p = c + (y / 2) * cs + x / 2;
            int c00 = p[0], c01 = p[1], c10 = p[cs], c11 = p[cs + 1];
            uint8_t *q = o + y * os + x;
            q[0] = (uint8_t)((c00 * 9 + c01 * 3 + c10 * 3 + c11 + 8) / 16);
            q[1] = (uint8_t)((c00 * 3 + c01 * 9 + c10 + c11 * 3 + 8) / 16);
            q[os] = (uint8_t)((c00 * 3 + c01 + c10 * 9 + c11 * 3 + 8) / 16);
            q[os + 1] = (uint8_t)((c00 + c01 * 3 + c10 * 3 + c11 * 9 + 8) / 16);
        }
    }
    nr_plane_free(chroma);
    *chroma = out;
    return 1;
}

int nr_heif_float_coefficients(int matrix, float *r_cr, float *g_cb, float *g_cr, float *b_cb) {
    float kr, kb;
    switch (matrix) {
    case 1: kr = 0.2126f, kb = 0.0722f; break;
    case 4: kr = 0.30f, kb = 0.11f; break;
    case 5:
    case 6: kr = 0.299f, kb = 0.114f; break;
    case 7: kr = 0.212f, kb = 0.087f; break;
    case 9:
    case 10: kr = 0.2627f, kb = 0.0593f; break;
    case 2:
        *r_cr = 1.402f, *g_cb = -0.344136f, *g_cr = -0.714136f, *b_cb = 1.772f;
        return 1;
    default: return 0;
    }
    *r_cr = 2 * (-kr + 1);
    *g_cb = 2 * kb * (-kb + 1) / (kb + kr - 1);
    *g_cr = 2 * kr * (-kr + 1) / (kb + kr - 1);
    *b_cb = 2 * (-kb + 1);
    return 1;
}

static uint8_t nr_clip_float(float value) {
    long rounded = (long)(value + 0.5f);
    return rounded < 0 ? 0 : rounded > 255 ? 255 : (uint8_t)rounded;
}

void nr_ycbcr444_to_rgb_float(const struct nr_plane *luma, const struct nr_plane *cb, const struct nr_plane *cr,
    const struct nr_plane *alpha, float r_cr, float g_cb, float g_cr, float b_cb, struct nr_plane *rgb) {
    for (uint32_t y = 0; y < rgb->height; y++) {
        const uint8_t *yr = luma->data + y * luma->stride;
        const uint8_t *br = cb->data + y * cb->stride, *rr = cr->data + y * cr->stride;
        const uint8_t *ar = alpha ? alpha->data + y * alpha->stride : NULL;
        uint8_t *out = rgb->data + y * rgb->stride;
        for (uint32_t x = 0; x < rgb->width; x++) {
            float yv = (float)yr[x], cbv = (float)(br[x] - 128), crv = (float)(rr[x] - 128);
            uint8_t *px = out + (size_t)x * rgb->bytes;
            px[0] = nr_clip_float(yv + r_cr * crv);
            px[1] = nr_clip_float(yv + g_cb * cbv + g_cr * crv);
            px[2] = nr_clip_float(yv + b_cb * cbv);
            if (rgb->bytes == 4) {
                px[3] = ar ? ar[x] : 255;
            }
        }
    }
}


int nr_libyuv_constants(int matrix, int primaries, int full_range, struct nr_yuv_constants *k) {
    static const struct nr_yuv_constants jpeg = {16320, 32, 113, 22, 46, 90}, f709 = {16320, 32, 119, 12, 30, 101},
                                         v2020 = {16320, 32, 120, 11, 37, 94},
                                         i601 = {18997, -1160, 128, 25, 52, 102},
                                         h709 = {18997, -1160, 128, 14, 34, 115},
                                         u2020 = {19003, -1160, 128, 12, 42, 107};
    int family;  // 601, 709, 2020
    switch (matrix) {
    case 1: family = 709; break;
    case 2:
    case 5:
    case 6: family = 601; break;
    case 9: family = 2020; break;
    case 12:
        family = (primaries == 1 || primaries == 2) ? 709
            : (primaries == 5 || primaries == 6)    ? 601
            : primaries == 9                        ? 2020
                                                    : 0;
        break;
    default: family = 0;
    }
    switch (family) {
    case 601: *k = full_range ? jpeg : i601; return 1;
    case 709: *k = full_range ? f709 : h709; return 1;
    case 2020: *k = full_range ? v2020 : u2020; return 1;
    default: return 0;
    }
}

static uint8_t nr_clamp_x64(int value) {
    return value < 0 ? 0 : (value >> 6) > 255 ? 255 : (uint8_t)(value >> 6);
}

/// One row of libyuv's `YuvPixel` over 4:4:4 chroma rows.
static void nr_libyuv_row(const uint8_t *luma, const uint8_t *cb, const uint8_t *cr, const uint8_t *alpha,
    uint32_t width, const struct nr_yuv_constants *k, uint8_t *out, uint32_t bytes) {
    for (uint32_t x = 0; x < width; x++) {
        int y1 = (int)((uint32_t)(luma[x] * 0x0101u * (uint32_t)k->yg) >> 16) + k->yb;
        int u = cb[x] - 128, v = cr[x] - 128;
        uint8_t *px = out + (size_t)x * bytes;
        px[0] = nr_clamp_x64(y1 + v * k->vr);
        px[1] = nr_clamp_x64(y1 - (u * k->ug + v * k->vg));
        px[2] = nr_clamp_x64(y1 + u * k->ub);
        if (bytes == 4) {
            px[3] = alpha ? alpha[x] : 255;
        }
    }
}

/// libyuv's horizontal 2x chroma upsampling of one row (`ScaleRowUp2_Linear_Any`): 3:1 weights,
/// the first and last samples kept.
static void nr_libyuv_linear(const uint8_t *s, uint8_t *d, uint32_t width) {
    uint32_t pairs = ((width - 1) & ~1u) / 2;
    d[0] = s[0];
    for (uint32_t i = 0; i < pairs; i++) {
        d[1 + 2 * i] = (uint8_t)((3 * s[i] + s[i + 1] + 2) >> 2);
        d[2 + 2 * i] = (uint8_t)((s[i] + 3 * s[i + 1] + 2) >> 2);
    }
    d[width - 1] = s[(width - 1) / 2];
}

/// libyuv's 2x2 chroma upsampling of two rows into two (`ScaleRowUp2_Bilinear_Any`): 9:3:3:1
/// weights, the first and last columns 3:1 between the rows.
static void nr_libyuv_bilinear(const uint8_t *s, const uint8_t *t, uint8_t *d, uint8_t *e, uint32_t width) {
    uint32_t pairs = ((width - 1) & ~1u) / 2, last = (width - 1) / 2;
    d[0] = (uint8_t)((3 * s[0] + t[0] + 2) >> 2);
    e[0] = (uint8_t)((s[0] + 3 * t[0] + 2) >> 2);
    for (uint32_t i = 0; i < pairs; i++) {
        int a = s[i], b = s[i + 1], c = t[i], f = t[i + 1];
        d[1 + 2 * i] = (uint8_t)((a * 9 + b * 3 + c * 3 + f + 8) >> 4);
        d[2 + 2 * i] = (uint8_t)((a * 3 + b * 9 + c + f * 3 + 8) >> 4);
        e[1 + 2 * i] = (uint8_t)((a * 3 + b + c * 9 + f * 3 + 8) >> 4);
        e[2 + 2 * i] = (uint8_t)((a + b * 3 + c * 3 + f * 9 + 8) >> 4);
    }
    d[width - 1] = (uint8_t)((3 * s[last] + t[last] + 2) >> 2);
    e[width - 1] = (uint8_t)((s[last] + 3 * t[last] + 2) >> 2);
}

int nr_ycbcr_to_rgb_libyuv(const struct nr_plane *luma, const struct nr_plane *cb, const struct nr_plane *cr,
    const struct nr_plane *alpha, enum heif_chroma chroma, const struct nr_yuv_constants *k, struct nr_plane *rgb) {
    uint32_t w = rgb->width, h = rgb->height;
    uint32_t cw = chroma == heif_chroma_444 ? w : (w + 1) / 2;
    uint32_t ch = chroma == heif_chroma_420 ? (h + 1) / 2 : h;
    if (cb->width < cw || cr->width < cw || cb->height < ch || cr->height < ch) {
        return 0;
    }
    uint8_t *rows = malloc((size_t)w * 4);
    if (!rows) {
        return 0;
    }
    uint8_t *u0 = rows, *u1 = rows + w, *v0 = rows + 2 * (size_t)w, *v1 = rows + 3 * (size_t)w;
#define NR_ROW(plane, y) ((plane)->data + (size_t)(y) * (plane)->stride)
#define NR_ALPHA(y) (alpha ? NR_ROW(alpha, y) : NULL)
    if (chroma == heif_chroma_444) {
        for (uint32_t y = 0; y < h; y++) {
            nr_libyuv_row(NR_ROW(luma, y), NR_ROW(cb, y), NR_ROW(cr, y), NR_ALPHA(y), w, k, NR_ROW(rgb, y), rgb->bytes);
        }
    } else if (chroma == heif_chroma_422) {
        for (uint32_t y = 0; y < h; y++) {
            nr_libyuv_linear(NR_ROW(cb, y), u0, w);
            nr_libyuv_linear(NR_ROW(cr, y), v0, w);
            nr_libyuv_row(NR_ROW(luma, y), u0, v0, NR_ALPHA(y), w, k, NR_ROW(rgb, y), rgb->bytes);
        }
    } else {
        // The first row from the first chroma row; then pairs of rows between two chroma rows;
        // an even height's last row from the last chroma row.
        nr_libyuv_linear(NR_ROW(cb, 0), u0, w);
        nr_libyuv_linear(NR_ROW(cr, 0), v0, w);
        nr_libyuv_row(NR_ROW(luma, 0), u0, v0, NR_ALPHA(0), w, k, NR_ROW(rgb, 0), rgb->bytes);
        uint32_t row = 0;
        for (uint32_t y = 1; y + 1 < h; y += 2, row++) {
            nr_libyuv_bilinear(NR_ROW(cb, row), NR_ROW(cb, row + 1), u0, u1, w);
            nr_libyuv_bilinear(NR_ROW(cr, row), NR_ROW(cr, row + 1), v0, v1, w);
            nr_libyuv_row(NR_ROW(luma, y), u0, v0, NR_ALPHA(y), w, k, NR_ROW(rgb, y), rgb->bytes);
            nr_libyuv_row(NR_ROW(luma, y + 1), u1, v1, NR_ALPHA(y + 1), w, k, NR_ROW(rgb, y + 1), rgb->bytes);
        }
        if (h % 2 == 0) {
            nr_libyuv_linear(NR_ROW(cb, h / 2 - 1), u0, w);
            nr_libyuv_linear(NR_ROW(cr, h / 2 - 1), v0, w);
            nr_libyuv_row(NR_ROW(luma, h - 1), u0, v0, NR_ALPHA(h - 1), w, k, NR_ROW(rgb, h - 1), rgb->bytes);
        }
    }
#undef NR_ALPHA
#undef NR_ROW
    free(rows);
    return 1;
}
