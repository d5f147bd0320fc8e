// CArchive: raw DEFLATE decompression (zlib) for NetRunner's zip reader.
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
int nr_inflate_raw(const uint8_t *input, size_t input_size, uint8_t *output, size_t output_size);

#ifdef __cplusplus
}
#endif

#endif  // NETRUNNER_CARCHIVE_H
