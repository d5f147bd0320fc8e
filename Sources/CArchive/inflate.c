// Raw DEFLATE decompression with zlib's inflate, bounded by both buffers.
#include "CArchive.h"

#include <string.h>
#include <zlib.h>

int nr_inflate_raw(const uint8_t *input, size_t input_size, uint8_t *output, size_t output_size) {
  if (input_size > UINT32_MAX || output_size > UINT32_MAX) return 2;
  z_stream stream;
  memset(&stream, 0, sizeof(stream));
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) return 3;
  stream.next_in = (Bytef *)input;
  stream.avail_in = (uInt)input_size;
  stream.next_out = output;
  stream.avail_out = (uInt)output_size;
  int status = inflate(&stream, Z_FINISH);
  size_t produced = output_size - stream.avail_out;
  inflateEnd(&stream);
  if (status == Z_STREAM_END) return produced == output_size ? 0 : 2;
  if (status == Z_BUF_ERROR && stream.avail_out == 0) return 2;  // more data than declared
  return 1;
}
