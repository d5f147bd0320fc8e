// WebP decoding over libwebp (stills) and libwebpdemux (the first frame of an animation).
//
// libwebp decodes from the memory block it is given and reports errors as status codes (no
// longjmp, nothing printed). A still is decoded straight into the caller's rows; so is the first
// frame of an animation, composed on the canvas as WebPAnimDecoder (and so Pillow) composes it.
#include "CImageCodecs.h"
#include "nr_formats.h"

#include <stdio.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/demux.h>

static int nr_webp_fail(char *message, int status, const char *text) {
    if (message) {
        snprintf(message, NR_CODEC_MESSAGE_SIZE, "%s", text);
    }
    return status;
}

static int nr_webp_status(VP8StatusCode code) {
    switch (code) {
    case VP8_STATUS_OK: return NR_CODEC_OK;
    case VP8_STATUS_NOT_ENOUGH_DATA: return NR_CODEC_TRUNCATED;
    case VP8_STATUS_OUT_OF_MEMORY: return NR_CODEC_NO_MEMORY;
    case VP8_STATUS_UNSUPPORTED_FEATURE: return NR_CODEC_UNSUPPORTED;
    default: return NR_CODEC_CORRUPT;
    }
}

static const char *nr_webp_reason(VP8StatusCode code) {
    switch (code) {
    case VP8_STATUS_NOT_ENOUGH_DATA: return "the data ends before the image does";
    case VP8_STATUS_OUT_OF_MEMORY: return "libwebp ran out of memory";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "a WebP feature libwebp does not decode";
    case VP8_STATUS_INVALID_PARAM: return "libwebp refused the parameters";
    case VP8_STATUS_BITSTREAM_ERROR: return "the WebP bitstream is corrupt";
    default: return "libwebp could not decode the data";
    }
}


int nr_webp_info(const uint8_t *data, size_t size, int *width, int *height, int *has_alpha, int *animated,
    char *message) {
    if (!data || !width || !height || !has_alpha || !animated) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    WebPBitstreamFeatures features;
    VP8StatusCode code = WebPGetFeatures(data, size, &features);
    if (code != VP8_STATUS_OK) {
        return nr_webp_fail(message, nr_webp_status(code), nr_webp_reason(code));
    }
    *animated = features.has_animation ? 1 : 0;
    *has_alpha = features.has_alpha ? 1 : 0;
    *width = features.width;
    *height = features.height;
    if (features.has_animation) {
        // The canvas, not the first frame's rectangle, is the image's size.
        WebPData whole = {data, size};
        WebPDemuxer *demux = WebPDemux(&whole);
        if (!demux) {
            return nr_webp_fail(message, NR_CODEC_CORRUPT, "the WebP animation's chunks are corrupt or cut short");
        }
        *width = (int)WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH);
        *height = (int)WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
        WebPDemuxDelete(demux);
    }
    return NR_CODEC_OK;
}

static int nr_webp_decode_animation(const uint8_t *data, size_t size, int with_alpha, uint8_t *pixels,
    size_t bytes_per_row, size_t capacity, char *message) {
    // The first frame composed on the canvas as WebPAnimDecoder (and so Pillow) composes it: the
    // canvas starts transparent black and the first frame is a key frame, decoded over it without
    // blending. Done here into the caller's rows, so that the only canvas is the caller's (whose
    // size was checked against the pixel limit): WebPAnimDecoder allocates two RGBA canvases of
    // the declared size before any frame.
    WebPData whole = {data, size};
    WebPDemuxer *demux = WebPDemux(&whole);
    if (!demux) {
        return nr_webp_fail(message, NR_CODEC_CORRUPT, "the WebP animation's chunks are corrupt or cut short");
    }
    size_t width = WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH), height = WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
    size_t channels = with_alpha ? 4 : 3;
    if (width == 0 || height == 0 || bytes_per_row < width * channels || capacity / bytes_per_row < height) {
        WebPDemuxDelete(demux);
        return nr_webp_fail(message, NR_CODEC_BAD_ARGUMENT, "the destination is too small");
    }
    WebPIterator frame;
    if (!WebPDemuxGetFrame(demux, 1, &frame)) {
        WebPDemuxDelete(demux);
        return nr_webp_fail(message, NR_CODEC_CORRUPT, "the WebP animation has no frame");
    }
    int status = NR_CODEC_OK;
    // libwebpdemux has checked that the frame lies inside the canvas; checked again, as sizes.
    size_t x = (size_t)frame.x_offset, y = (size_t)frame.y_offset;
    size_t frame_width = (size_t)frame.width, frame_height = (size_t)frame.height;
    if (frame.x_offset < 0 || frame.y_offset < 0 || frame.width <= 0 || frame.height <= 0 || x > width
        || frame_width > width - x || y > height || frame_height > height - y) {
        status = nr_webp_fail(message, NR_CODEC_CORRUPT, "the first frame of the WebP animation lies outside its canvas");
    } else {
        for (size_t row = 0; row < height; row++) {
            memset(pixels + row * bytes_per_row, 0, width * channels);
        }
        WebPDecoderConfig config;
        if (!WebPInitDecoderConfig(&config)) {
            status = nr_webp_fail(message, NR_CODEC_BAD_ARGUMENT, "libwebp is not the version built for");
        } else {
            uint8_t *origin = pixels + y * bytes_per_row + x * channels;
            config.output.colorspace = with_alpha ? MODE_RGBA : MODE_RGB;
            config.output.is_external_memory = 1;
            config.output.u.RGBA.rgba = origin;
            config.output.u.RGBA.stride = (int)bytes_per_row;
            config.output.u.RGBA.size = (frame_height - 1) * bytes_per_row + frame_width * channels;
            VP8StatusCode code = WebPDecode(frame.fragment.bytes, frame.fragment.size, &config);
            WebPFreeDecBuffer(&config.output);
            if (code != VP8_STATUS_OK) {
                status = nr_webp_fail(message, nr_webp_status(code), nr_webp_reason(code));
            } else if (config.input.width != frame.width || config.input.height != frame.height) {
                status = nr_webp_fail(message, NR_CODEC_CORRUPT, "the first frame's bitstream and its ANMF size differ");
            }
        }
    }
    WebPDemuxReleaseIterator(&frame);
    WebPDemuxDelete(demux);
    return status;
}

int nr_webp_decode(const uint8_t *data, size_t size, int with_alpha, int scaled_width, int scaled_height,
    uint8_t *pixels, size_t bytes_per_row, size_t capacity, char *message) {
    if (!data || !pixels) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) {
        return nr_webp_fail(message, NR_CODEC_BAD_ARGUMENT, "libwebp is not the version built for");
    }
    VP8StatusCode code = WebPGetFeatures(data, size, &config.input);
    if (code != VP8_STATUS_OK) {
        return nr_webp_fail(message, nr_webp_status(code), nr_webp_reason(code));
    }
    if (config.input.has_animation) {
        if (scaled_width > 0 || scaled_height > 0) {
            return nr_webp_fail(message, NR_CODEC_BAD_ARGUMENT, "an animation is decoded at its own size");
        }
        return nr_webp_decode_animation(data, size, with_alpha, pixels, bytes_per_row, capacity, message);
    }
    if (scaled_width > 0 && scaled_height > 0) {
        // libwebp's rescaler: every macroblock decoded, then averaged down row by row.
        config.options.use_scaling = 1;
        config.options.scaled_width = scaled_width;
        config.options.scaled_height = scaled_height;
    }
    config.output.colorspace = with_alpha ? MODE_RGBA : MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = pixels;
    config.output.u.RGBA.stride = (int)bytes_per_row;
    config.output.u.RGBA.size = capacity;
    code = WebPDecode(data, size, &config);
    WebPFreeDecBuffer(&config.output);
    if (code != VP8_STATUS_OK) {
        return nr_webp_fail(message, nr_webp_status(code), nr_webp_reason(code));
    }
    return NR_CODEC_OK;
}
