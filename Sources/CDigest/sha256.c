// SHA-256 over libcrypto's EVP interface (not the deprecated SHA256_* calls).
#include "CDigest.h"

#include <openssl/evp.h>

void *nr_sha256_begin(void) {
  EVP_MD_CTX *context = EVP_MD_CTX_new();
  if (context == NULL) return NULL;
  if (EVP_DigestInit_ex(context, EVP_sha256(), NULL) != 1) {
    EVP_MD_CTX_free(context);
    return NULL;
  }
  return context;
}

int nr_sha256_update(void *context, const void *bytes, size_t count) {
  if (count == 0) return 1;
  return EVP_DigestUpdate((EVP_MD_CTX *)context, bytes, count) == 1;
}

int nr_sha256_end(void *context, uint8_t *digest) {
  unsigned int length = 0;
  int ok = EVP_DigestFinal_ex((EVP_MD_CTX *)context, digest, &length) == 1 && length == 32;
  EVP_MD_CTX_free((EVP_MD_CTX *)context);
  return ok;
}
