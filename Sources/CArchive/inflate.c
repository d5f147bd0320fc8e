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

#include <stdlib.h>

void *nr_inflate_begin(void) {
  z_stream *stream = calloc(1, sizeof(z_stream));
  if (stream == NULL) return NULL;
  if (inflateInit2(stream, -MAX_WBITS) != Z_OK) {
    free(stream);
    return NULL;
  }
  return stream;
}

int nr_inflate_step(void *state, const uint8_t *input, size_t input_size, size_t *used, uint8_t *output,
                    size_t output_size, size_t *made) {
  z_stream *stream = state;
  uInt in = input_size > UINT32_MAX ? UINT32_MAX : (uInt)input_size;
  uInt out = output_size > UINT32_MAX ? UINT32_MAX : (uInt)output_size;
  stream->next_in = (Bytef *)input;
  stream->avail_in = in;
  stream->next_out = output;
  stream->avail_out = out;
  int status = inflate(stream, Z_NO_FLUSH);
  *used = in - stream->avail_in;
  *made = out - stream->avail_out;
  if (status == Z_STREAM_END) return 1;
  if (status == Z_OK || status == Z_BUF_ERROR) return 0;
  return -1;
}

void nr_inflate_end(void *state) {
  inflateEnd((z_stream *)state);
  free(state);
}

uint32_t nr_crc32(uint32_t crc, const uint8_t *bytes, size_t count) {
  while (count > 0) {
    uInt step = count > (1u << 30) ? (1u << 30) : (uInt)count;
    crc = (uint32_t)crc32(crc, bytes, step);
    bytes += step;
    count -= step;
  }
  return crc;
}
