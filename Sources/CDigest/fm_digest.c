// SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, whose contexts live on the heap; the
// low-level calls run the same assembly and keep the state in caller-owned memory.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "fm_digest.h"
#include <openssl/sha.h>

_Static_assert(sizeof(SHA256_CTX) <= sizeof(fm_sha256_ctx), "fm_sha256_ctx must hold a SHA256_CTX");
_Static_assert(_Alignof(SHA256_CTX) <= _Alignof(fm_sha256_ctx), "fm_sha256_ctx must be aligned for a SHA256_CTX");

void fm_sha256_init(fm_sha256_ctx *ctx) { SHA256_Init((SHA256_CTX *)ctx); }

void fm_sha256_update(fm_sha256_ctx *ctx, const void *data, size_t length) {
    if (length > 0) SHA256_Update((SHA256_CTX *)ctx, data, length);
}

void fm_sha256_final(fm_sha256_ctx *ctx, unsigned char out[32]) { SHA256_Final(out, (SHA256_CTX *)ctx); }
