// GIF decoding over giflib: the first frame, composed on the logical screen.
//
// giflib reads through our input function, which never reads past the memory block. Every
// record before the first image (extensions, comments) is read and dropped, except the graphic
// control extension that gives the transparent index. Errors are giflib's codes, turned into
// messages here (nothing is printed).
#include "CImageCodecs.h"
#include "nr_formats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>

struct nr_gif_input {
    const uint8_t *data;
    size_t size;
    size_t position;
    int ran_out;
};

static int nr_gif_read(GifFileType *gif, GifByteType *out, int length) {
    struct nr_gif_input *input = gif->UserData;
    if (length < 0) {
        return 0;
    }
    size_t wanted = (size_t)length;
    size_t left = input->size - input->position;
    if (wanted > left) {
        input->ran_out = 1;
        wanted = left;
    }
    memcpy(out, input->data + input->position, wanted);
    input->position += wanted;
    return (int)wanted;
}

static int nr_gif_fail(char *message, int status, const char *text, int code) {
    if (message) {
        const char *detail = code ? GifErrorString(code) : NULL;
        if (detail) {
            snprintf(message, NR_CODEC_MESSAGE_SIZE, "%s (%s)", text, detail);
        } else {
            snprintf(message, NR_CODEC_MESSAGE_SIZE, "%s", text);
        }
    }
    return status;
}

static GifFileType *nr_gif_open(struct nr_gif_input *input, char *message, int *status) {
    int code = 0;
    GifFileType *gif = DGifOpen(input, nr_gif_read, &code);
    if (!gif) {
        *status = nr_gif_fail(message, input->ran_out ? NR_CODEC_TRUNCATED : NR_CODEC_CORRUPT,
            "not a readable GIF", code);
    } else {
        *status = NR_CODEC_OK;
    }
    return gif;
}

int nr_gif_info(const uint8_t *data, size_t size, int *width, int *height, char *message) {
    if (!data || !width || !height) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    struct nr_gif_input input = {data, size, 0, 0};
    int status;
    GifFileType *gif = nr_gif_open(&input, message, &status);
    if (!gif) {
        return status;
    }
    *width = gif->SWidth;
    *height = gif->SHeight;
    DGifCloseFile(gif, NULL);
    return NR_CODEC_OK;
}

/// The most records read before the first image: real files have a handful (application,
/// comment and control extensions); each one consumes bytes, so this only bounds the work.
#define NR_GIF_MAX_RECORDS 100000

int nr_gif_decode(const uint8_t *data, size_t size, uint64_t max_pixels, uint8_t *pixels, size_t bytes_per_row,
    size_t capacity, char *message) {
    if (!data || !pixels) {
        return NR_CODEC_BAD_ARGUMENT;
    }
    struct nr_gif_input input = {data, size, 0, 0};
    int status;
    GifFileType *gif = nr_gif_open(&input, message, &status);
    if (!gif) {
        return status;
    }
    size_t width = (size_t)gif->SWidth, height = (size_t)gif->SHeight;
    if (width == 0 || height == 0 || bytes_per_row < width * 3 || capacity / bytes_per_row < height) {
        DGifCloseFile(gif, NULL);
        return nr_gif_fail(message, NR_CODEC_BAD_ARGUMENT, "the destination is too small", 0);
    }
    int transparent = -1;
    char failure_text[NR_CODEC_MESSAGE_SIZE];
    GifPixelType *line = NULL;
    status = NR_CODEC_CORRUPT;
    const char *failure = "the GIF has no image";
    for (int records = 0; records < NR_GIF_MAX_RECORDS; records++) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) {
            failure = "a GIF record is corrupt";
            break;
        }
        if (type == TERMINATE_RECORD_TYPE) {
            break;
        }
        if (type == EXTENSION_RECORD_TYPE) {
            int function = 0;
            GifByteType *block = NULL;
            if (DGifGetExtension(gif, &function, &block) == GIF_ERROR) {
                failure = "a GIF extension is corrupt";
                break;
            }
            if (function == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= 4) {
                transparent = (block[1] & 0x01) ? block[4] : -1;
            }
            int broken = 0;
            while (block) {
                if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) {
                    broken = 1;
                    break;
                }
            }
            if (broken) {
                failure = "a GIF extension is corrupt";
                break;
            }
            continue;
        }
        if (type != IMAGE_DESC_RECORD_TYPE) {
            continue;
        }
        if (DGifGetImageDesc(gif) == GIF_ERROR) {
            failure = "the GIF's image descriptor is corrupt";
            break;
        }
        const ColorMapObject *map = gif->Image.ColorMap ? gif->Image.ColorMap : gif->SColorMap;
        uint8_t palette[256][3];
        for (int i = 0; i < 256; i++) {
            if (map) {
                // Indices past the table read as black, as in Pillow's palette.
                GifColorType colour = i < map->ColorCount ? map->Colors[i] : (GifColorType){0, 0, 0};
                palette[i][0] = colour.Red;
                palette[i][1] = colour.Green;
                palette[i][2] = colour.Blue;
            } else {
                palette[i][0] = palette[i][1] = palette[i][2] = (uint8_t)i;
            }
        }
        // What the frame does not cover: the transparent index's colour, else index 0's.
        const uint8_t *fill = palette[transparent >= 0 ? transparent : 0];
        for (size_t y = 0; y < height; y++) {
            uint8_t *row = pixels + y * bytes_per_row;
            for (size_t x = 0; x < width; x++) {
                memcpy(row + 3 * x, fill, 3);
            }
        }
        long left = gif->Image.Left, top = gif->Image.Top;
        long frame_width = gif->Image.Width, frame_height = gif->Image.Height;
        if (frame_width <= 0 || frame_height <= 0) {
            failure = "the GIF's first frame is empty";
            break;
        }
        // The rows that reach the screen: a frame may lie partly outside it (it is cropped), but
        // every row read costs its whole width of LZW, so the work is bounded before any row is
        // read: the frame's width times the rows read up to the last visible one (all of them
        // when interlaced, whose passes interleave) may not pass the pixel limit.
        long visible_rows = (long)height > top ? (long)height - top : 0;
        long rows_read = gif->Image.Interlace ? frame_height : (frame_height < visible_rows ? frame_height : visible_rows);
        if ((uint64_t)frame_width * (uint64_t)rows_read > max_pixels) {
            status = NR_CODEC_UNSUPPORTED;
            snprintf(failure_text, sizeof failure_text,
                "the first frame (%ldx%ld at %ld,%ld) asks for more than %llu pixels of decoding on a %zux%zu screen",
                frame_width, frame_height, left, top, (unsigned long long)max_pixels, width, height);
            failure = failure_text;
            break;
        }
        line = malloc((size_t)frame_width);
        if (!line) {
            status = NR_CODEC_NO_MEMORY;
            failure = "no memory for a GIF row";
            break;
        }
        static const int starts[4] = {0, 4, 2, 1}, steps[4] = {8, 8, 4, 2};
        int passes = gif->Image.Interlace ? 4 : 1;
        int broken = 0;
        for (int pass = 0; pass < passes && !broken; pass++) {
            long start = gif->Image.Interlace ? starts[pass] : 0, step = gif->Image.Interlace ? steps[pass] : 1;
            long end = gif->Image.Interlace ? frame_height : rows_read;
            for (long y = start; y < end; y += step) {
                if (DGifGetLine(gif, line, (int)frame_width) == GIF_ERROR) {
                    broken = 1;
                    break;
                }
                long screen_y = top + y;
                if (screen_y < 0 || screen_y >= (long)height) {
                    continue;
                }
                uint8_t *row = pixels + (size_t)screen_y * bytes_per_row;
                for (long x = 0; x < frame_width; x++) {
                    long screen_x = left + x;
                    if (screen_x >= 0 && screen_x < (long)width) {
                        memcpy(row + 3 * screen_x, palette[line[x]], 3);
                    }
                }
            }
        }
        if (broken) {
            status = input.ran_out ? NR_CODEC_TRUNCATED : NR_CODEC_CORRUPT;
            failure = input.ran_out ? "the data ends before the image does" : "the GIF's image data is corrupt";
            break;
        }
        status = NR_CODEC_OK;
        break;
    }
    free(line);
    int code = gif->Error;
    DGifCloseFile(gif, NULL);
    if (status != NR_CODEC_OK) {
        if (status == NR_CODEC_CORRUPT && input.ran_out) {
            status = NR_CODEC_TRUNCATED;
            failure = "the data ends before the image does";
        }
        return nr_gif_fail(message, status, failure, status == NR_CODEC_CORRUPT ? code : 0);
    }
    return NR_CODEC_OK;
}
