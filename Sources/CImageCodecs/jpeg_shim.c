// JPEG decoding and encoding over libjpeg-turbo, reading from and writing to memory only (the
// encoder in jpeg_encode.c).
//
// Error handling: libjpeg reports fatal errors through `error_exit`, which we replace with a
// longjmp back to the setjmp point armed at the top of every public function here and in
// jpeg_encode.c. Warnings go through `emit_message(-1)`: a premature end of data and the
// "Corrupt JPEG data" warnings become errors (a grey or half-decoded image must never reach a
// model); the remaining warnings (for example extraneous bytes before a marker) are harmless
// and ignored. Nothing is printed: `output_message` is a no-op and messages are copied into the
// handle.
#include "CImageCodecs.h"
#include "jpeg_scans.h"
#include "jpeg_shim.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

/// libjpeg may not use more working memory than this.
#define NR_JPEG_MAX_MEMORY (1536L * 1024L * 1024L)

struct nr_jpeg_decoder {
    struct jpeg_decompress_struct info;
    struct nr_jpeg_error error;
    struct jpeg_progress_mgr progress;
    int created;
    int layout;
    int cmyk;
    uint8_t *scratch;  // one CMYK row, freed by nr_jpeg_close
    const uint8_t *data;  // the file, borrowed from the caller
    size_t size;
    uint8_t *filtered;  // the file without the scans a scaled decode does not need, or NULL
};

static void nr_jpeg_copy_message(j_common_ptr cinfo, struct nr_jpeg_error *error) {
    char text[JMSG_LENGTH_MAX];
    text[0] = 0;
    (*cinfo->err->format_message)(cinfo, text);
    snprintf(error->message, sizeof error->message, "%s", text);
}

static void nr_jpeg_error_exit(j_common_ptr cinfo) {
    struct nr_jpeg_error *error = (struct nr_jpeg_error *)cinfo->err;
    nr_jpeg_copy_message(cinfo, error);
    if (error->status == NR_CODEC_OK) {
        error->status = cinfo->err->msg_code == JERR_OUT_OF_MEMORY ? NR_CODEC_NO_MEMORY : NR_CODEC_CORRUPT;
    }
    longjmp(error->jump, 1);
}

static void nr_jpeg_emit_message(j_common_ptr cinfo, int level) {
    struct nr_jpeg_error *error = (struct nr_jpeg_error *)cinfo->err;
    if (level >= 0) {
        return;  // trace messages
    }
    switch (cinfo->err->msg_code) {
    case JWRN_JPEG_EOF:
        error->status = NR_CODEC_TRUNCATED;
        nr_jpeg_copy_message(cinfo, error);
        longjmp(error->jump, 1);
    case JWRN_HIT_MARKER:
    case JWRN_MUST_RESYNC:
    case JWRN_NOT_SEQUENTIAL:
        error->status = NR_CODEC_CORRUPT;
        nr_jpeg_copy_message(cinfo, error);
        longjmp(error->jump, 1);
    default:
        cinfo->err->num_warnings++;
    }
}

static void nr_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void nr_jpeg_progress(j_common_ptr cinfo) {
    j_decompress_ptr dinfo = (j_decompress_ptr)cinfo;
    if (dinfo->input_scan_number > NR_JPEG_MAX_SCANS) {
        struct nr_jpeg_error *error = (struct nr_jpeg_error *)cinfo->err;
        error->status = NR_CODEC_CORRUPT;
        snprintf(error->message, sizeof error->message,
            "more than %d scans (each scan is another pass over the image; encoders write at most a few dozen)",
            NR_JPEG_MAX_SCANS);
        longjmp(error->jump, 1);
    }
}

void nr_jpeg_install_errors(struct nr_jpeg_error *error) {
    jpeg_std_error(&error->base);
    error->base.error_exit = nr_jpeg_error_exit;
    error->base.emit_message = nr_jpeg_emit_message;
    error->base.output_message = nr_jpeg_output_message;
    error->status = NR_CODEC_OK;
    error->message[0] = 0;
}

nr_jpeg_decoder *nr_jpeg_open(const uint8_t *data, size_t size, int *status) {
    nr_jpeg_decoder *decoder = calloc(1, sizeof *decoder);
    if (!decoder) {
        *status = NR_CODEC_NO_MEMORY;
        return NULL;
    }
    decoder->info.err = &decoder->error.base;
    nr_jpeg_install_errors(&decoder->error);
    if (setjmp(decoder->error.jump)) {
        *status = decoder->error.status;
        return decoder;
    }
    jpeg_create_decompress(&decoder->info);
    decoder->created = 1;
    decoder->info.mem->max_memory_to_use = NR_JPEG_MAX_MEMORY;
    decoder->progress.progress_monitor = nr_jpeg_progress;
    decoder->info.progress = &decoder->progress;
    decoder->data = data;
    decoder->size = size;
    jpeg_mem_src(&decoder->info, data, (unsigned long)size);
    jpeg_read_header(&decoder->info, TRUE);
    *status = NR_CODEC_OK;
    return decoder;
}

const char *nr_jpeg_message(const nr_jpeg_decoder *decoder) { return decoder ? decoder->error.message : ""; }

void nr_jpeg_close(nr_jpeg_decoder *decoder) {
    if (!decoder) {
        return;
    }
    free(decoder->scratch);
    free(decoder->filtered);
    if (decoder->created) {
        // jpeg_destroy_decompress cannot fail, but arm the jump anyway.
        if (setjmp(decoder->error.jump) == 0) {
            jpeg_destroy_decompress(&decoder->info);
        }
    }
    free(decoder);
}

void nr_jpeg_header(const nr_jpeg_decoder *decoder, int *width, int *height, int *components) {
    *width = (int)decoder->info.image_width;
    *height = (int)decoder->info.image_height;
    *components = decoder->info.num_components;
}

// MARK: Reading only the scans a scaled decode needs

/// The size of the inverse DCT libjpeg runs on a block of component `c` (8 unscaled).
static int nr_jpeg_idct_size(const jpeg_component_info *component) {
#if JPEG_LIB_VERSION >= 70
    return component->DCT_h_scaled_size > component->DCT_v_scaled_size ? component->DCT_h_scaled_size
                                                                         : component->DCT_v_scaled_size;
#else
    return component->DCT_scaled_size;
#endif
}

/// Points the decoder at a copy of its file without the scans a decode at `scale_num`/8 does
/// not need (see NR_JPEG_SCANS_*), and reads the header again. Nothing changes for a
/// sequential file or when every scan is needed. Each component is judged by the inverse DCT
/// libjpeg runs on it: at 1/8 a 4:2:0 file's chroma blocks are scaled 2x2, not 1x1 (libjpeg
/// scales them up in the DCT rather than by upsampling), and need more than their DC.
static void nr_jpeg_drop_scans(nr_jpeg_decoder *decoder, int scale_num, int scans) {
    struct jpeg_decompress_struct *info = &decoder->info;
    if (scans == NR_JPEG_SCANS_ALL || scale_num == 8 || !info->progressive_mode || info->arith_code
        || decoder->filtered || info->num_components > MAX_COMPONENTS) {
        return;
    }
    info->scale_num = (unsigned int)scale_num;
    info->scale_denom = 8;
    jpeg_calc_output_dimensions(info);
    int corners[MAX_COMPONENTS];
    int drops = 0;
    for (int c = 0; c < info->num_components; c++) {
        int size = nr_jpeg_idct_size(&info->comp_info[c]);
        // libjpeg-turbo's 2x2 and 4x4 inverse DCTs read rows and columns up to 7, so only
        // the 1x1 one leaves scans unread; the approximation keeps the block's corner.
        corners[c] = scans == NR_JPEG_SCANS_EXACT ? (size == 1 ? 1 : 8) : (size == 1 || size == 2 || size == 4 ? size : 8);
        drops |= corners[c] < 8;
    }
    if (!drops) {
        return;
    }
    decoder->filtered = malloc(decoder->size);
    if (!decoder->filtered) {
        return;
    }
    int smoothing = 0;
    boolean smooths = info->do_block_smoothing;
    size_t length = nr_jpeg_keep_scans(decoder->data, decoder->size, info, corners, decoder->filtered, &smoothing);
    if (length == 0) {
        free(decoder->filtered);
        decoder->filtered = NULL;
        return;
    }
    jpeg_abort_decompress(info);
    jpeg_mem_src(info, decoder->filtered, (unsigned long)length);
    jpeg_read_header(info, TRUE);
    // Block smoothing guesses the low coefficients of blocks whose scans have not arrived,
    // and this copy lacks scans: it smooths only where a read of every scan would, and then
    // alike on what the scale reads (nr_jpeg_keep_scans). The approximation never smooths.
    info->do_block_smoothing = scans == NR_JPEG_SCANS_EXACT && smoothing ? smooths : FALSE;
}

int nr_jpeg_configure(
    nr_jpeg_decoder *decoder, int layout, int scale_num, int scans, int *out_width, int *out_height) {
    if (scale_num < 1 || scale_num > 8 || scans < NR_JPEG_SCANS_ALL || scans > NR_JPEG_SCANS_APPROXIMATE) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    decoder->error.status = NR_CODEC_OK;
    if (setjmp(decoder->error.jump)) {
        return decoder->error.status;
    }
    nr_jpeg_drop_scans(decoder, scale_num, scans);
    J_COLOR_SPACE space = decoder->info.jpeg_color_space;
    decoder->cmyk = space == JCS_CMYK || space == JCS_YCCK;
    decoder->layout = layout;
    if (decoder->cmyk) {
        decoder->info.out_color_space = JCS_CMYK;
    } else {
        switch (layout) {
        case NR_LAYOUT_GRAY: decoder->info.out_color_space = JCS_GRAYSCALE; break;
        case NR_LAYOUT_RGB: decoder->info.out_color_space = JCS_EXT_RGB; break;
        case NR_LAYOUT_RGBA: decoder->info.out_color_space = JCS_EXT_RGBA; break;
        case NR_LAYOUT_BGRA: decoder->info.out_color_space = JCS_EXT_BGRA; break;
        default: return NR_CODEC_BAD_ARGUMENT;
        }
    }
    decoder->info.scale_num = (unsigned int)scale_num;
    decoder->info.scale_denom = 8;
    decoder->info.dct_method = JDCT_ISLOW;
    jpeg_calc_output_dimensions(&decoder->info);
    *out_width = (int)decoder->info.output_width;
    *out_height = (int)decoder->info.output_height;
    return NR_CODEC_OK;
}

static int nr_layout_bytes(int layout) {
    switch (layout) {
    case NR_LAYOUT_GRAY: return 1;
    case NR_LAYOUT_RGB: return 3;
    default: return 4;
    }
}

/// Converts one row of CMYK (Adobe files store it inverted) to `layout`.
static void nr_cmyk_row(const uint8_t *cmyk, uint8_t *out, size_t width, int layout, int inverted) {
    for (size_t x = 0; x < width; x++) {
        unsigned c = cmyk[4 * x], m = cmyk[4 * x + 1], y = cmyk[4 * x + 2], k = cmyk[4 * x + 3];
        if (!inverted) {
            c = 255 - c;
            m = 255 - m;
            y = 255 - y;
            k = 255 - k;
        }
        unsigned r = (c * k + 127) / 255, g = (m * k + 127) / 255, b = (y * k + 127) / 255;
        switch (layout) {
        case NR_LAYOUT_GRAY: out[x] = (uint8_t)((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16); break;
        case NR_LAYOUT_RGB:
            out[3 * x] = (uint8_t)r;
            out[3 * x + 1] = (uint8_t)g;
            out[3 * x + 2] = (uint8_t)b;
            break;
        case NR_LAYOUT_RGBA:
            out[4 * x] = (uint8_t)r;
            out[4 * x + 1] = (uint8_t)g;
            out[4 * x + 2] = (uint8_t)b;
            out[4 * x + 3] = 255;
            break;
        default:
            out[4 * x] = (uint8_t)b;
            out[4 * x + 1] = (uint8_t)g;
            out[4 * x + 2] = (uint8_t)r;
            out[4 * x + 3] = 255;
        }
    }
}

int nr_jpeg_decode(nr_jpeg_decoder *decoder, uint8_t *pixels, size_t bytes_per_row, size_t capacity) {
    decoder->error.status = NR_CODEC_OK;
    if (setjmp(decoder->error.jump)) {
        return decoder->error.status;
    }
    jpeg_start_decompress(&decoder->info);
    size_t width = decoder->info.output_width;
    size_t height = decoder->info.output_height;
    size_t row_bytes = width * (size_t)nr_layout_bytes(decoder->layout);
    if (bytes_per_row < row_bytes || height == 0 || (height - 1) * bytes_per_row + row_bytes > capacity) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    if (decoder->cmyk) {
        free(decoder->scratch);
        decoder->scratch = malloc(width * 4);
        uint8_t *scratch = decoder->scratch;
        if (!scratch) {
            return NR_CODEC_NO_MEMORY;
        }
        int inverted = decoder->info.saw_Adobe_marker;
        while (decoder->info.output_scanline < height) {
            size_t y = decoder->info.output_scanline;
            JSAMPROW row = scratch;
            if (jpeg_read_scanlines(&decoder->info, &row, 1) != 1) {
                return NR_CODEC_CORRUPT;
            }
            nr_cmyk_row(scratch, pixels + y * bytes_per_row, width, decoder->layout, inverted);
        }
    } else {
        JSAMPROW rows[16];
        while (decoder->info.output_scanline < height) {
            size_t y = decoder->info.output_scanline;
            size_t count = height - y < 16 ? height - y : 16;
            for (size_t i = 0; i < count; i++) {
                rows[i] = pixels + (y + i) * bytes_per_row;
            }
            if (jpeg_read_scanlines(&decoder->info, rows, (JDIMENSION)count) == 0) {
                return NR_CODEC_CORRUPT;
            }
        }
    }
    // Every pixel is decoded; the trailing markers are not needed (libjpeg's read-ahead has
    // already reported a missing end of data as truncation).
    jpeg_abort_decompress(&decoder->info);
    return NR_CODEC_OK;
}

// MARK: Decoding a region

/// The width in output pixels of one iMCU column (16 for 4:2:0 and 4:2:2 at full scale, 8 for
/// 4:4:4 and grey): libjpeg-turbo crops columns in these steps.
static int nr_jpeg_imcu_width(const struct jpeg_decompress_struct *info) {
    int samples = (info->comps_in_scan == 1 && info->num_components == 1) ? 1 : info->max_h_samp_factor;
#if JPEG_LIB_VERSION >= 70
    return samples * info->min_DCT_h_scaled_size;
#else
    return samples * info->min_DCT_scaled_size;
#endif
}

/// The height in output rows of one iMCU row.
static int nr_jpeg_imcu_height(const struct jpeg_decompress_struct *info) {
    int samples = (info->comps_in_scan == 1 && info->num_components == 1) ? 1 : info->max_v_samp_factor;
#if JPEG_LIB_VERSION >= 70
    return samples * info->min_DCT_v_scaled_size;
#else
    return samples * info->min_DCT_scaled_size;
#endif
}

int nr_jpeg_start_region(nr_jpeg_decoder *decoder, int left, int width, int *out_left, int *out_width) {
    decoder->error.status = NR_CODEC_OK;
    if (setjmp(decoder->error.jump)) {
        return decoder->error.status;
    }
    jpeg_start_decompress(&decoder->info);
    long full = (long)decoder->info.output_width;
    if (left < 0 || width <= 0 || (long)left + (long)width > full) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    // One iMCU of margin on each side: fancy upsampling reads a chroma sample's neighbours,
    // and libjpeg treats the cropped edges as the image's edges.
    long margin = nr_jpeg_imcu_width(&decoder->info);
    long first = (long)left - margin < 0 ? 0 : (long)left - margin;
    long end = (long)left + (long)width + margin > full ? full : (long)left + (long)width + margin;
    JDIMENSION xoffset = (JDIMENSION)first;
    JDIMENSION columns = (JDIMENSION)(end - first);
    if (first > 0 || end < full) {
        jpeg_crop_scanline(&decoder->info, &xoffset, &columns);
    }
    *out_left = (int)xoffset;
    *out_width = (int)decoder->info.output_width;
    return NR_CODEC_OK;
}

/// Reads one output row into `row` (CMYK converted through the scratch row).
static void nr_jpeg_read_row(nr_jpeg_decoder *decoder, uint8_t *row, int inverted) {
    if (decoder->cmyk) {
        JSAMPROW scratch = decoder->scratch;
        if (jpeg_read_scanlines(&decoder->info, &scratch, 1) != 1) {
            ERREXIT(&decoder->info, JERR_BAD_STATE);
        }
        nr_cmyk_row(decoder->scratch, row, decoder->info.output_width, decoder->layout, inverted);
    } else {
        JSAMPROW target = row;
        if (jpeg_read_scanlines(&decoder->info, &target, 1) != 1) {
            ERREXIT(&decoder->info, JERR_BAD_STATE);
        }
    }
}

int nr_jpeg_read_region(nr_jpeg_decoder *decoder, int top, int height, uint8_t *pixels, size_t bytes_per_row,
    size_t capacity) {
    decoder->error.status = NR_CODEC_OK;
    if (setjmp(decoder->error.jump)) {
        return decoder->error.status;
    }
    size_t width = decoder->info.output_width;
    size_t full = decoder->info.output_height;
    size_t row_bytes = width * (size_t)nr_layout_bytes(decoder->layout);
    if (top < 0 || height <= 0 || (size_t)top + (size_t)height > full || bytes_per_row < row_bytes
        || ((size_t)height - 1) * bytes_per_row + row_bytes > capacity) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    // One row to read into and throw away (the margin above, the image's last row), plus the
    // CMYK row.
    free(decoder->scratch);
    decoder->scratch = malloc(width * 4 + row_bytes);
    if (!decoder->scratch) {
        return NR_CODEC_NO_MEMORY;
    }
    uint8_t *discard = decoder->scratch + width * 4;
    int inverted = decoder->info.saw_Adobe_marker;
    // Two iMCU rows of margin above: the upsampler's context rows are then those of a full decode.
    size_t margin = 2 * (size_t)nr_jpeg_imcu_height(&decoder->info);
    size_t first = (size_t)top > margin ? (size_t)top - margin : 0;
    if (first > 0) {
        jpeg_skip_scanlines(&decoder->info, (JDIMENSION)first);
    }
    while (decoder->info.output_scanline < (size_t)top) {
        nr_jpeg_read_row(decoder, discard, inverted);
    }
    if (decoder->cmyk) {
        for (size_t y = 0; y < (size_t)height; y++) {
            nr_jpeg_read_row(decoder, pixels + y * bytes_per_row, inverted);
        }
    } else {
        JSAMPROW rows[16];
        size_t end = (size_t)top + (size_t)height;
        while (decoder->info.output_scanline < end) {
            size_t y = decoder->info.output_scanline - (size_t)top;
            size_t count = end - decoder->info.output_scanline < 16 ? end - decoder->info.output_scanline : 16;
            for (size_t i = 0; i < count; i++) {
                rows[i] = pixels + (y + i) * bytes_per_row;
            }
            if (jpeg_read_scanlines(&decoder->info, rows, (JDIMENSION)count) == 0) {
                return NR_CODEC_CORRUPT;
            }
        }
    }
    // The rows below are entropy-decoded but not reconstructed (skipping to the very end
    // would not read them), so a file cut short there is still refused; the last row is read.
    if (decoder->info.output_scanline + 1 < full) {
        jpeg_skip_scanlines(&decoder->info, (JDIMENSION)(full - 1 - decoder->info.output_scanline));
    }
    if (decoder->info.output_scanline < full) {
        nr_jpeg_read_row(decoder, discard, inverted);
    }
    jpeg_abort_decompress(&decoder->info);
    return NR_CODEC_OK;
}
