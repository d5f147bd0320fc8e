// TIFF decoding over libtiff, from memory, first directory only.
//
// The file is opened with TIFFClientOpenExt over our read/seek/size procedures (reads never
// pass the memory block; writes are refused), with per-file error and warning handlers that
// copy the first error into our message and print nothing, and a cap on any single allocation
// libtiff makes. Only 8- and 16-bit contiguous grey, RGB and RGB + one extra sample are decoded
// (plus 8-bit JPEG-compressed YCbCr, which libjpeg converts to RGB); everything else is refused
// by name.
//
// 16-bit samples become 8-bit ones as Pillow 13 gives them to `Image.open(f).convert("RGB")`:
// RGB and RGBA keep each sample's high byte (its "RGB;16L"/"RGB;16B" unpackers; an associated
// alpha is unpremultiplied as its "RGBa;16" one does), while grey, which Pillow opens as mode
// "I;16" and converts by clipping, keeps values up to 255 and makes every larger one 255.
#include "CImageCodecs.h"
#include "nr_formats.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

struct nr_tiff_input {
    const uint8_t *data;
    size_t size;
    size_t position;
    int failed;
    char message[NR_CODEC_MESSAGE_SIZE];
};

static tmsize_t nr_tiff_read(thandle_t handle, void *out, tmsize_t length) {
    struct nr_tiff_input *input = handle;
    if (length <= 0 || input->position >= input->size) {
        return 0;
    }
    size_t wanted = (size_t)length, left = input->size - input->position;
    if (wanted > left) {
        wanted = left;
    }
    memcpy(out, input->data + input->position, wanted);
    input->position += wanted;
    return (tmsize_t)wanted;
}

static tmsize_t nr_tiff_write(thandle_t handle, void *data, tmsize_t length) {
    (void)handle;
    (void)data;
    (void)length;
    return 0;
}

static toff_t nr_tiff_seek(thandle_t handle, toff_t offset, int whence) {
    struct nr_tiff_input *input = handle;
    uint64_t base = whence == SEEK_CUR ? input->position : whence == SEEK_END ? input->size : 0;
    if (offset > UINT64_MAX - base) {
        return (toff_t)-1;
    }
    uint64_t target = base + offset;
    if (target > input->size) {
        // Past the end: later reads return nothing, and libtiff reports the short read.
        target = input->size;
    }
    input->position = (size_t)target;
    return (toff_t)target;
}

static int nr_tiff_close_proc(thandle_t handle) {
    (void)handle;
    return 0;
}

static toff_t nr_tiff_size(thandle_t handle) {
    return ((struct nr_tiff_input *)handle)->size;
}

static int nr_tiff_map(thandle_t handle, void **base, toff_t *size) {
    (void)handle;
    (void)base;
    (void)size;
    return 0;
}

static void nr_tiff_unmap(thandle_t handle, void *base, toff_t size) {
    (void)handle;
    (void)base;
    (void)size;
}

static int nr_tiff_error(TIFF *tif, void *user, const char *module, const char *format, va_list args) {
    (void)tif;
    (void)module;
    struct nr_tiff_input *input = user;
    if (!input->failed) {
        vsnprintf(input->message, sizeof input->message, format, args);
        input->failed = 1;
    }
    return 1;  // handled: libtiff's global handler (which prints) is not called
}

static int nr_tiff_warning(TIFF *tif, void *user, const char *module, const char *format, va_list args) {
    (void)tif;
    (void)user;
    (void)module;
    (void)format;
    (void)args;
    return 1;
}

/// The largest single allocation libtiff may make (a strip or tile buffer, a tag's array):
/// far above a real strip, far below what a forged header would ask for.
#define NR_TIFF_MAX_ALLOCATION ((tmsize_t)256 * 1024 * 1024)

static TIFF *nr_tiff_open(struct nr_tiff_input *input) {
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (!options) {
        return NULL;
    }
    TIFFOpenOptionsSetMaxSingleMemAlloc(options, NR_TIFF_MAX_ALLOCATION);
    TIFFOpenOptionsSetErrorHandlerExtR(options, nr_tiff_error, input);
    TIFFOpenOptionsSetWarningHandlerExtR(options, nr_tiff_warning, input);
    // "rm": read only, never memory-mapped (our map procedure declines anyway).
    TIFF *tif = TIFFClientOpenExt("image data", "rm", input, nr_tiff_read, nr_tiff_write, nr_tiff_seek,
        nr_tiff_close_proc, nr_tiff_size, nr_tiff_map, nr_tiff_unmap, options);
    TIFFOpenOptionsFree(options);
    return tif;
}

static int nr_tiff_fail(char *message, int status, const char *text) {
    if (message) {
        snprintf(message, NR_CODEC_MESSAGE_SIZE, "%s", text);
    }
    return status;
}

static int nr_tiff_library_failure(const struct nr_tiff_input *input, char *message, const char *fallback) {
    int cut = input->position >= input->size;
    return nr_tiff_fail(message, cut ? NR_CODEC_TRUNCATED : NR_CODEC_CORRUPT,
        input->message[0] ? input->message : fallback);
}

/// How the first directory's samples are stored.
struct nr_tiff_format {
    /// 1, 3 or 4: the samples per pixel decoded (grey, RGB, RGB + one extra sample).
    int samples;
    /// 8 or 16.
    int bits;
    /// A 16-bit fourth sample that is associated (premultiplied) alpha.
    int premultiplied;
};

/// Checks the first directory's layout.
static int nr_tiff_layout(TIFF *tif, struct nr_tiff_format *format, char *message) {
    uint16_t bits = 1, per_pixel = 1, photometric = 0, planar = PLANARCONFIG_CONTIG, compression = 1;
    uint16_t sample_format = SAMPLEFORMAT_UINT;
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &per_pixel);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &sample_format);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric)) {
        return nr_tiff_fail(message, NR_CODEC_CORRUPT, "the TIFF has no PhotometricInterpretation tag");
    }
    char text[NR_CODEC_MESSAGE_SIZE];
    if (bits != 8 && bits != 16) {
        snprintf(text, sizeof text,
            "%u bits per sample (8- and 16-bit grey, RGB and RGBA TIFFs are decoded)", bits);
        return nr_tiff_fail(message, NR_CODEC_UNSUPPORTED, text);
    }
    if (sample_format != SAMPLEFORMAT_UINT) {
        const char *kind = sample_format == SAMPLEFORMAT_INT ? "signed integer"
            : sample_format == SAMPLEFORMAT_IEEEFP               ? "floating-point"
                                                                 : "other";
        snprintf(text, sizeof text, "%s samples (unsigned 8- and 16-bit grey, RGB and RGBA TIFFs are decoded)", kind);
        return nr_tiff_fail(message, NR_CODEC_UNSUPPORTED, text);
    }
    if (planar != PLANARCONFIG_CONTIG && per_pixel > 1) {
        return nr_tiff_fail(message, NR_CODEC_UNSUPPORTED, "planar (separate) samples; contiguous ones are decoded");
    }
    format->bits = bits;
    format->premultiplied = 0;
    if (bits == 16 && photometric == PHOTOMETRIC_RGB && per_pixel == 4) {
        uint16_t count = 0;
        uint16_t *kinds = NULL;
        if (TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &count, &kinds) && count == 1 && kinds
            && kinds[0] == EXTRASAMPLE_ASSOCALPHA) {
            format->premultiplied = 1;
        }
    }
    int *samples = &format->samples;
    if (bits == 8 && photometric == PHOTOMETRIC_YCBCR && compression == COMPRESSION_JPEG && per_pixel == 3) {
        TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
        *samples = 3;
        return NR_CODEC_OK;
    }
    if (photometric == PHOTOMETRIC_MINISBLACK && per_pixel == 1) {
        *samples = 1;
        return NR_CODEC_OK;
    }
    if (photometric == PHOTOMETRIC_RGB && (per_pixel == 3 || per_pixel == 4)) {
        *samples = per_pixel;
        return NR_CODEC_OK;
    }
    const char *name = photometric == PHOTOMETRIC_MINISWHITE ? "min-is-white grey"
        : photometric == PHOTOMETRIC_PALETTE                 ? "palette colour"
        : photometric == PHOTOMETRIC_SEPARATED               ? "CMYK (separated)"
        : photometric == PHOTOMETRIC_YCBCR && bits == 16     ? "16-bit YCbCr"
        : photometric == PHOTOMETRIC_YCBCR                   ? "YCbCr without JPEG compression"
        : photometric == PHOTOMETRIC_CIELAB                  ? "CIE L*a*b*"
                                                             : "this photometric interpretation";
    snprintf(text, sizeof text,
        "%s with %u sample(s) per pixel (8- and 16-bit grey, RGB and RGBA TIFFs are decoded)", name, per_pixel);
    return nr_tiff_fail(message, NR_CODEC_UNSUPPORTED, text);
}

int nr_tiff_info(const uint8_t *data, size_t size, int *width, int *height, int *samples, int *orientation,
    char *message) {
    if (!data || !width || !height || !samples || !orientation) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    struct nr_tiff_input input = {data, size, 0, 0, {0}};
    TIFF *tif = nr_tiff_open(&input);
    if (!tif) {
        return nr_tiff_library_failure(&input, message, "not a readable TIFF");
    }
    uint32_t w = 0, h = 0;
    uint16_t turn = ORIENTATION_TOPLEFT;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
    TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &turn);
    struct nr_tiff_format format = {0, 8, 0};
    int status = nr_tiff_layout(tif, &format, message);
    *samples = format.samples;
    TIFFClose(tif);
    if (status != NR_CODEC_OK) {
        return status;
    }
    if (w == 0 || h == 0 || w > INT32_MAX || h > INT32_MAX) {
        return nr_tiff_fail(message, NR_CODEC_CORRUPT, "the TIFF's size is zero or too large");
    }
    *width = (int)w;
    *height = (int)h;
    *orientation = turn >= 1 && turn <= 8 ? turn : 1;
    return NR_CODEC_OK;
}

/// Turns `count` pixels of the file's samples into our 8-bit ones (in place when 8-bit).
static void nr_tiff_narrow(const struct nr_tiff_format *format, const uint8_t *in, uint8_t *out, size_t count) {
    if (format->bits == 8) {
        if (in != out) {
            memcpy(out, in, count * (size_t)format->samples);
        }
        return;
    }
    // libtiff hands 16-bit samples over in the machine's byte order, whatever the file's.
    const uint16_t *samples = (const uint16_t *)(const void *)in;
    if (format->samples == 1) {
        for (size_t index = 0; index < count; index++) {
            out[index] = samples[index] > 255 ? 255 : (uint8_t)samples[index];
        }
        return;
    }
    size_t values = count * (size_t)format->samples;
    if (!format->premultiplied) {
        for (size_t index = 0; index < values; index++) {
            out[index] = (uint8_t)(samples[index] >> 8);
        }
        return;
    }
    for (size_t index = 0; index < values; index += 4) {
        int alpha = samples[index + 3] >> 8;
        for (int channel = 0; channel < 3; channel++) {
            int value = samples[index + (size_t)channel] >> 8;
            int straight = alpha == 0 ? 0 : alpha == 255 ? value : value * 255 / alpha;
            out[index + (size_t)channel] = (uint8_t)(straight > 255 ? 255 : straight);
        }
        out[index + 3] = (uint8_t)alpha;
    }
}

static int nr_tiff_read_tiles(TIFF *tif, const struct nr_tiff_format *format, uint32_t width, uint32_t height,
    uint8_t *pixels, size_t bytes_per_row) {
    uint32_t tile_width = 0, tile_height = 0;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tile_width);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &tile_height);
    tmsize_t tile_size = TIFFTileSize(tif);
    size_t pixel_bytes = (size_t)format->samples, stored_bytes = pixel_bytes * (size_t)(format->bits / 8);
    if (tile_width == 0 || tile_height == 0 || tile_size <= 0
        || (uint64_t)tile_width * tile_height * stored_bytes > (uint64_t)tile_size) {
        return 0;
    }
    uint8_t *tile = _TIFFmalloc(tile_size);
    if (!tile) {
        return 0;
    }
    int ok = 1;
    for (uint32_t y = 0; y < height && ok; y += tile_height) {
        for (uint32_t x = 0; x < width && ok; x += tile_width) {
            if (TIFFReadTile(tif, tile, x, y, 0, 0) < 0) {
                ok = 0;
                break;
            }
            uint32_t rows = height - y < tile_height ? height - y : tile_height;
            uint32_t columns = width - x < tile_width ? width - x : tile_width;
            for (uint32_t row = 0; row < rows; row++) {
                nr_tiff_narrow(format, tile + (size_t)row * tile_width * stored_bytes,
                    pixels + (size_t)(y + row) * bytes_per_row + (size_t)x * pixel_bytes, columns);
            }
        }
    }
    _TIFFfree(tile);
    return ok;
}

/// Reads the strips' rows: straight into the destination when 8-bit, else through one row.
static int nr_tiff_read_rows(TIFF *tif, const struct nr_tiff_format *format, uint32_t width, uint32_t height,
    uint8_t *pixels, size_t bytes_per_row) {
    tmsize_t line = TIFFScanlineSize(tif);
    size_t stored = (size_t)width * (size_t)format->samples * (size_t)(format->bits / 8);
    if (line <= 0 || (size_t)line < stored) {
        return 0;
    }
    uint8_t *row = NULL;
    if (format->bits == 8) {
        if ((size_t)line > bytes_per_row) {
            return 0;
        }
    } else if (!(row = _TIFFmalloc(line))) {
        return 0;
    }
    int ok = 1;
    for (uint32_t y = 0; y < height && ok; y++) {
        uint8_t *out = pixels + (size_t)y * bytes_per_row;
        ok = TIFFReadScanline(tif, row ? row : out, y, 0) >= 0;
        if (ok && row) {
            nr_tiff_narrow(format, row, out, width);
        }
    }
    if (row) {
        _TIFFfree(row);
    }
    return ok;
}

int nr_tiff_decode(const uint8_t *data, size_t size, uint8_t *pixels, size_t bytes_per_row, size_t capacity,
    char *message) {
    if (!data || !pixels) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    struct nr_tiff_input input = {data, size, 0, 0, {0}};
    TIFF *tif = nr_tiff_open(&input);
    if (!tif) {
        return nr_tiff_library_failure(&input, message, "not a readable TIFF");
    }
    struct nr_tiff_format format = {0, 8, 0};
    int status = nr_tiff_layout(tif, &format, message);
    uint32_t width = 0, height = 0;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width);
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height);
    size_t pixel_bytes = (size_t)format.samples;
    if (status == NR_CODEC_OK
        && (height == 0 || bytes_per_row < (size_t)width * pixel_bytes || capacity / bytes_per_row < height)) {
        status = nr_tiff_fail(message, NR_CODEC_BAD_ARGUMENT, "the destination is too small");
    }
    if (status == NR_CODEC_OK) {
        int ok = TIFFIsTiled(tif) ? nr_tiff_read_tiles(tif, &format, width, height, pixels, bytes_per_row)
                                  : nr_tiff_read_rows(tif, &format, width, height, pixels, bytes_per_row);
        if (!ok) {
            status = nr_tiff_library_failure(&input, message, "the TIFF's pixel data is undecodable");
        }
    }
    TIFFClose(tif);
    return status;
}
