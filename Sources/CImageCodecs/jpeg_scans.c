// The scan script of a progressive JPEG, walked marker by marker: see jpeg_scans.h.
#include "jpeg_scans.h"

#include <string.h>

/// The position in its 8x8 block (row * 8 + column) of each coefficient in zigzag order.
static const uint8_t nr_zigzag_natural[64] = {
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21,
    28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61,
    54, 47, 55, 62, 63};

/// Where the entropy-coded data starting at `at` ends: at the next marker other than a restart
/// marker (its fill bytes included), or at the end of the data.
static size_t nr_jpeg_entropy_end(const uint8_t *data, size_t size, size_t at) {
    while (at < size) {
        const uint8_t *ff = memchr(data + at, 0xFF, size - at);
        if (!ff) {
            return size;
        }
        size_t marker = (size_t)(ff - data);
        size_t next = marker + 1;
        while (next < size && data[next] == 0xFF) {
            next++;
        }
        if (next >= size) {
            return size;
        }
        if (data[next] != 0x00 && (data[next] < 0xD0 || data[next] > 0xD7)) {
            return marker;
        }
        at = next + 1;
    }
    return size;
}

size_t nr_jpeg_keep_scans(
    const uint8_t *data, size_t size, const struct jpeg_decompress_struct *info, const int *corners, uint8_t *out) {
    if (size < 4 || data[0] != 0xFF || data[1] != 0xD8 || info->num_components > MAX_COMPONENTS) {
        return 0;
    }
    // For each component and zigzag coefficient: -1 not sent yet, -2 dropped, else its Al.
    signed char state[MAX_COMPONENTS][64];
    memset(state, -1, sizeof state);
    size_t length = 2, at = 2;
    memcpy(out, data, 2);
    int scans = 0, dropped = 0;
    while (at < size) {
        if (data[at] != 0xFF) {
            return 0;
        }
        size_t start = at;
        while (at < size && data[at] == 0xFF) {
            at++;
        }
        if (at + 1 > size) {
            break;
        }
        int code = data[at++];
        size_t end = at;
        if (code != 0xD9 && code != 0x01 && (code < 0xD0 || code > 0xD7)) {
            if (at + 2 > size) {
                end = size;
            } else {
                size_t segment = (size_t)data[at] << 8 | data[at + 1];
                end = segment < 2 || segment > size - at ? size : at + segment;
            }
        }
        if (code != 0xDA || end == size) {
            // Any other marker, and a scan header cut short: copied for libjpeg to read.
            memcpy(out + length, data + start, end - start);
            length += end - start;
            at = end;
            if (code == 0xD9) {
                break;
            }
            continue;
        }
        if (++scans > NR_JPEG_MAX_SCANS) {
            return 0;
        }
        int count = data[at + 2];
        if (count < 1 || count > 4 || end - at != 6 + 2 * (size_t)count) {
            return 0;
        }
        int first = data[end - 3], last = data[end - 2], high = data[end - 1] >> 4, low = data[end - 1] & 15;
        if (first > last || last > 63 || (first == 0 && last != 0) || (first > 0 && count != 1)) {
            return 0;
        }
        int components[4];
        for (int i = 0; i < count; i++) {
            components[i] = -1;
            for (int c = 0; c < info->num_components; c++) {
                if (info->comp_info[c].component_id == data[at + 3 + 2 * i]) {
                    components[i] = c;
                }
            }
            if (components[i] < 0) {
                return 0;
            }
        }
        int needed = 0, broken = 0;
        for (int i = 0; i < count; i++) {
            for (int k = first; k <= last; k++) {
                int was = state[components[i]][k];
                int position = nr_zigzag_natural[k];
                int corner = corners[components[i]];
                needed |= position / 8 < corner && position % 8 < corner;
                if (high == 0 ? was != -1 : (was != -2 && was != high)) {
                    return 0;
                }
                broken |= was == -2;
            }
        }
        int keep = needed && !broken;
        for (int i = 0; i < count; i++) {
            for (int k = first; k <= last; k++) {
                state[components[i]][k] = (signed char)(keep ? low : -2);
            }
        }
        size_t scan_end = nr_jpeg_entropy_end(data, size, end);
        if (keep) {
            memcpy(out + length, data + start, scan_end - start);
            length += scan_end - start;
        } else {
            dropped++;
        }
        at = scan_end;
    }
    return dropped ? length : 0;
}
