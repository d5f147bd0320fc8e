// CArchive: raw DEFLATE decompression and CRC-32 (zlib) for NetRunner's zip reader.
#ifndef NETRUNNER_CARCHIVE_H
#define NETRUNNER_CARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Inflates raw DEFLATE data (a zip entry of method 8) into exactly `output_size` bytes.
/// Returns 0 on success, 1 when the data is corrupt or truncated, 2 when it would produce
/// more or fewer bytes than `output_size`, 3 when zlib cannot start. Never writes past
/// `output_size` bytes of `output`, never reads past `input_size` bytes of `input`.
int nr_inflate_raw(const uint8_t *_Nonnull input, size_t input_size, uint8_t *_Nullable output, size_t output_size);

/// Starts a streaming raw-DEFLATE inflater; NULL when zlib cannot start. End it with
/// `nr_inflate_end`.
void *_Nullable nr_inflate_begin(void);

/// Inflates from `input` (at most `input_size` bytes) into `output` (at most `output_size`
/// bytes), storing how many bytes were used and made. Returns 0 when more input or output room
/// is needed, 1 at the end of the stream, -1 when the data is corrupt.
int nr_inflate_step(void *_Nonnull state, const uint8_t *_Nullable input, size_t input_size, size_t *_Nonnull used,
                    uint8_t *_Nonnull output, size_t output_size, size_t *_Nonnull made);

/// Frees an inflater.
void nr_inflate_end(void *_Nonnull state);

/// Continues a CRC-32 (zip's, as zlib computes it) over `count` bytes; start with 0.
uint32_t nr_crc32(uint32_t crc, const uint8_t *_Nullable bytes, size_t count);

#ifdef __cplusplus
}
#endif

#endif  // NETRUNNER_CARCHIVE_H
