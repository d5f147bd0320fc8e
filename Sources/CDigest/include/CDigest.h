// SHA-256 through libcrypto (OpenSSL 3, Debian's libssl-dev): the one digest NetRunner uses to
// name models (check verdicts, results-file identities). Our own declaration; nothing else.
#ifndef NETRUNNER_CDIGEST_H
#define NETRUNNER_CDIGEST_H

#include <stddef.h>
#include <stdint.h>

/// An incremental SHA-256: allocate with nr_sha256_begin, feed with nr_sha256_update, finish
/// (and free) with nr_sha256_end. Returns NULL if libcrypto cannot allocate a context.
void *_Nullable nr_sha256_begin(void);

/// Adds `count` bytes. Returns 1 on success, 0 on failure.
int nr_sha256_update(void *_Nonnull context, const void *_Nullable bytes, size_t count);

/// Writes the 32-byte digest to `digest` and frees the context. Returns 1 on success, 0 on
/// failure (the context is freed either way).
int nr_sha256_end(void *_Nonnull context, uint8_t *_Nonnull digest);

#endif
