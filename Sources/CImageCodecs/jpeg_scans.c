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

/// Whether a read of every scan smooths blocks (libjpeg's `smoothing_ok`, jdcoefct.c), from
/// `bits`, each component's first SAVED_COEFS coefficients' Al after the last scan (-1: never
/// sent): when every component has its DC and some of those ACs are not exact. libjpeg also
/// asks for nonzero quantizers, which both reads share, so a `1` here is only a maybe.
static int nr_jpeg_full_read_smooths(const struct jpeg_decompress_struct *info, signed char bits[][64]) {
    int useful = 0;
    for (int c = 0; c < info->num_components; c++) {
        if (bits[c][0] < 0) {
            return 0;
        }
        for (int k = 1; k < 10; k++) {
            useful |= bits[c][k] != 0;
        }
    }
    return useful;
}

/// The frame component of the `i`th component of a scan listing `ids`, found as libjpeg's
/// get_sos finds it (jdmarker.c): the first of the first four frame components at or after
/// position `i` with that id, and never one an earlier entry took; -1 where libjpeg refuses.
static int nr_jpeg_scan_component(
    const struct jpeg_decompress_struct *info, const uint8_t *ids, int i, const int *found) {
    int limit = info->num_components < MAX_COMPS_IN_SCAN ? info->num_components : MAX_COMPS_IN_SCAN;
    for (int c = i; c < limit; c++) {
        if (info->comp_info[c].component_id == ids[2 * i]) {
            for (int p = 0; p < i; p++) {
                if (found[p] == c) {
                    return -1;
                }
            }
            return c;
        }
    }
    return -1;
}

size_t nr_jpeg_keep_scans(const uint8_t *data, size_t size, const struct jpeg_decompress_struct *info,
    const int *corners, uint8_t *out, int *smoothing) {
    if (size < 4 || data[0] != 0xFF || data[1] != 0xD8 || info->num_components > MAX_COMPONENTS) {
        return 0;
    }
    // A frame naming two components alike: libjpeg resolves a scan's id to one of them by its
    // position in the scan, a rule too odd to copy; such files are read whole.
    for (int c = 0; c < info->num_components; c++) {
        for (int d = 0; d < c; d++) {
            if (info->comp_info[c].component_id == info->comp_info[d].component_id) {
                return 0;
            }
        }
    }
    // For each component and zigzag coefficient: -1 not sent yet, -2 dropped, else its Al;
    // `full` as a read of every scan has it (libjpeg's coef_bits).
    signed char state[MAX_COMPONENTS][64], full[MAX_COMPONENTS][64];
    memset(state, -1, sizeof state);
    memset(full, -1, sizeof full);
    int last_dropped = 0;
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
                // Bytes after an end of image that cut a dropped scan short may be the rest
                // of its data, which a read of every scan would miss: read such files whole.
                if (last_dropped && end < size) {
                    return 0;
                }
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
        // libjpeg refuses these (jdphuff.c), dropped or not.
        if (first > last || last > 63 || (first == 0 && last != 0) || (first > 0 && count != 1) || low > 13
            || (high != 0 && low != high - 1)) {
            return 0;
        }
        int components[4];
        for (int i = 0; i < count; i++) {
            components[i] = nr_jpeg_scan_component(info, data + at + 3, i, components);
            // An AC scan before its component's DC: libjpeg warns and reads on, and latches
            // the quantizers where the component first appears, which dropping would move.
            if (components[i] < 0 || (first > 0 && state[components[i]][0] == -1)) {
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
                full[components[i]][k] = (signed char)low;
            }
        }
        size_t scan_end = nr_jpeg_entropy_end(data, size, end);
        if (keep) {
            memcpy(out + length, data + start, scan_end - start);
            length += scan_end - start;
        } else if (scan_end == size) {
            return 0;  // cut short in a dropped scan: a read of every scan judges it
        } else {
            dropped++;
        }
        last_dropped = !keep;
        at = scan_end;
    }
    if (!dropped) {
        return 0;
    }
    // Block smoothing (libjpeg's default) guesses a block's first ACs from its neighbours' DCs
    // where they are not exact, and, in a component with none of them at all, its DC too. A
    // read of every scan that smooths would then change the DC of a component whose ACs this
    // copy drops (it has none of them here, it had some there): such files are read whole.
    // Smoothing is otherwise the same in both (a kept component has all its scans, and a 1x1
    // inverse DCT reads the DC alone); where the full read does not smooth, this copy must not.
    *smoothing = nr_jpeg_full_read_smooths(info, full);
    for (int c = 0; *smoothing && c < info->num_components; c++) {
        for (int k = 1; k < 64; k++) {
            if (state[c][k] == -2) {
                for (int j = 1; j < 10; j++) {
                    if (full[c][j] != -1) {
                        return 0;
                    }
                }
                break;
            }
        }
    }
    return length;
}
