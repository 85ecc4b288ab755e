#ifndef FM_CURL_SHIMS_H
#define FM_CURL_SHIMS_H

// Why this C target exists: curl_easy_setopt is variadic and libcurl's callbacks take C function pointers,
// neither of which Swift calls cleanly. One blocking transfer with every option FoodMoment relies on lives
// here; Swift runs it off the cooperative pool. Nothing here prints or exits.

#include <stddef.h>

typedef struct {
    long status;              // HTTP status, 0 when no response
    unsigned char *body;      // malloc'ed; free with fm_http_response_free
    size_t length;
    int too_large;            // 1 when the body passed max_bytes (the transfer was stopped)
    char retry_after[64];     // value of a Retry-After header, if any
    char content_type[128];
    char *headers;            // malloc'ed "name: value\n" lines of the final response (capped at 32 KiB)
    size_t headers_length;
    int cancelled;            // 1 when the transfer was aborted through the cancel flag
    int curl_code;            // CURLcode of the transfer (0 = OK)
    char error[256];          // curl's error text
} fm_http_response;

/// Loads libcurl (on first use, not linked) and initialises it, once per process (idempotent, thread-safe); 0 when
/// ready. The transfers below call it themselves and report a failure in `error`.
int fm_curl_global_init(void);

/// GET `url` (http or https only; TLS verification on; proxies from the environment; redirects followed
/// within http/https, at most 5). `headers` are "Name: value" lines.
int fm_http_get(const char *url, const char *const *headers, int header_count, const char *user_agent,
                long connect_timeout_ms, long total_timeout_ms, size_t max_bytes, fm_http_response *out);

/// `method` is "GET" or "POST". A POST sends `body` (`body_length` bytes, kept alive by the caller for the whole
/// call) and never follows redirects (custom key headers must not travel to another host). When `cancel_flag`
/// is non-NULL and becomes non-zero (see fm_http_cancel) the transfer is aborted within about a second.
int fm_http_perform(const char *method, const char *url, const char *const *headers, int header_count,
                    const unsigned char *body, size_t body_length, const char *user_agent,
                    long connect_timeout_ms, long total_timeout_ms, size_t max_bytes, int *cancel_flag,
                    fm_http_response *out);

/// Sets a cancel flag (atomically) from any thread.
void fm_http_cancel(int *cancel_flag);

void fm_http_response_free(fm_http_response *r);

#endif
