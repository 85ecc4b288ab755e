#include "fm_curl_shims.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

// libcurl is loaded on first use, not linked: with its TLS, SSH, LDAP and Kerberos libraries it cost every process
// ~3.4 ms before `main`, though only look-ups with --online, LLM refinement and sync go on the network. The header still
// gives the types and signatures; the fields are named p_<function> so that curl.h's type-checking macro around
// curl_easy_setopt does not expand inside the call through the pointer.
#define FM_CURL_FUNCTIONS(X) \
    X(curl_easy_cleanup) \
    X(curl_easy_getinfo) \
    X(curl_easy_init) \
    X(curl_easy_perform) \
    X(curl_easy_setopt) \
    X(curl_easy_strerror) \
    X(curl_global_init) \
    X(curl_slist_append) \
    X(curl_slist_free_all)

static struct {
#define X(name) __typeof__(&name) p_##name;
    FM_CURL_FUNCTIONS(X)
#undef X
} fm_curl_lib;

static pthread_once_t fm_curl_once = PTHREAD_ONCE_INIT;
static int fm_curl_init_result = 0;
static char fm_curl_load_error[256];   // empty once loaded

static void fm_curl_do_init(void) {
    // FOODMOMENT_LIBCURL: another libcurl (a path, or a soname the loader finds) with the same interface.
    const char *asked = getenv("FOODMOMENT_LIBCURL");
    const char *soname = asked && *asked ? asked : "libcurl.so.4";
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(fm_curl_load_error, sizeof fm_curl_load_error, "cannot load %s (%s); install libcurl4 (Debian: apt-get install libcurl4) or set FOODMOMENT_LIBCURL",
                 soname, why ? why : "unknown reason");
        fm_curl_init_result = -1;
        return;
    }
#define X(name) \
    if (!(fm_curl_lib.p_##name = (__typeof__(&name))dlsym(lib, #name))) { \
        snprintf(fm_curl_load_error, sizeof fm_curl_load_error, "%s has no %s (this build was compiled against libcurl " LIBCURL_VERSION ")", soname, #name); \
        fm_curl_init_result = -1; \
        return; \
    }
    FM_CURL_FUNCTIONS(X)
#undef X
    fm_curl_init_result = (int)fm_curl_lib.p_curl_global_init(CURL_GLOBAL_DEFAULT);
    if (fm_curl_init_result != 0) snprintf(fm_curl_load_error, sizeof fm_curl_load_error, "curl_global_init failed (%d)", fm_curl_init_result);
}

int fm_curl_global_init(void) {
    pthread_once(&fm_curl_once, fm_curl_do_init);
    return fm_curl_init_result;
}

typedef struct {
    fm_http_response *out;
    size_t capacity;
    size_t max_bytes;
} fm_sink;

static size_t fm_write(char *data, size_t size, size_t nmemb, void *userdata) {
    fm_sink *sink = (fm_sink *)userdata;
    size_t n = size * nmemb;
    fm_http_response *r = sink->out;
    if (r->length + n > sink->max_bytes) { r->too_large = 1; return 0; }  // stops the transfer
    if (r->length + n > sink->capacity) {
        size_t cap = sink->capacity ? sink->capacity : 16384;
        while (cap < r->length + n) cap *= 2;
        unsigned char *bigger = (unsigned char *)realloc(r->body, cap);
        if (!bigger) return 0;
        r->body = bigger;
        sink->capacity = cap;
    }
    memcpy(r->body + r->length, data, n);
    r->length += n;
    return n;
}

static void fm_copy_header_value(const char *line, size_t n, size_t name_len, char *dst, size_t cap) {
    size_t i = name_len;
    while (i < n && (line[i] == ' ' || line[i] == '\t')) i++;
    size_t j = n;
    while (j > i && (line[j - 1] == '\r' || line[j - 1] == '\n' || line[j - 1] == ' ')) j--;
    size_t len = j - i < cap - 1 ? j - i : cap - 1;
    memcpy(dst, line + i, len);
    dst[len] = 0;
}

#define FM_HEADERS_CAP 32768

static size_t fm_header(char *line, size_t size, size_t nmemb, void *userdata) {
    fm_http_response *r = (fm_http_response *)userdata;
    size_t n = size * nmemb;
    if (n >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        // A new response (after a redirect or a 100 Continue): forget the previous one's headers.
        r->headers_length = 0;
        r->retry_after[0] = 0;
        r->content_type[0] = 0;
        return n;
    }
    if (!r->headers) {
        r->headers = (char *)malloc(FM_HEADERS_CAP + 1);
        if (!r->headers) return n;
    }
    size_t take = n;
    while (take > 0 && (line[take - 1] == '\r' || line[take - 1] == '\n')) take--;
    if (take > 0 && r->headers_length + take + 1 <= FM_HEADERS_CAP) {
        memcpy(r->headers + r->headers_length, line, take);
        r->headers_length += take;
        r->headers[r->headers_length++] = '\n';
        r->headers[r->headers_length] = 0;
    }
    if (n > 12 && strncasecmp(line, "Retry-After:", 12) == 0) fm_copy_header_value(line, n, 12, r->retry_after, sizeof r->retry_after);
    if (n > 13 && strncasecmp(line, "Content-Type:", 13) == 0) fm_copy_header_value(line, n, 13, r->content_type, sizeof r->content_type);
    return n;
}

static int fm_progress(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    int *flag = (int *)clientp;
    return flag && __atomic_load_n(flag, __ATOMIC_SEQ_CST) ? 1 : 0;  // non-zero aborts the transfer
}

void fm_http_cancel(int *cancel_flag) {
    if (cancel_flag) __atomic_store_n(cancel_flag, 1, __ATOMIC_SEQ_CST);
}

int fm_http_get(const char *url, const char *const *headers, int header_count, const char *user_agent,
                long connect_timeout_ms, long total_timeout_ms, size_t max_bytes, fm_http_response *out) {
    return fm_http_perform("GET", url, headers, header_count, NULL, 0, user_agent, connect_timeout_ms,
                           total_timeout_ms, max_bytes, NULL, out);
}

int fm_http_perform(const char *method, const char *url, const char *const *headers, int header_count,
                    const unsigned char *body, size_t body_length, const char *user_agent,
                    long connect_timeout_ms, long total_timeout_ms, size_t max_bytes, int *cancel_flag,
                    fm_http_response *out) {
    int is_post = strcmp(method, "POST") == 0;
    memset(out, 0, sizeof(*out));
    if (fm_curl_global_init() != 0) { snprintf(out->error, sizeof out->error, "%s", fm_curl_load_error); return -1; }
    CURL *curl = fm_curl_lib.p_curl_easy_init();
    if (!curl) { snprintf(out->error, sizeof out->error, "curl_easy_init failed"); return -1; }
    fm_sink sink = { out, 0, max_bytes };
    struct curl_slist *list = NULL;
    for (int i = 0; i < header_count; i++) {
        struct curl_slist *next = fm_curl_lib.p_curl_slist_append(list, headers[i]);
        if (!next) { fm_curl_lib.p_curl_slist_free_all(list); fm_curl_lib.p_curl_easy_cleanup(curl); snprintf(out->error, sizeof out->error, "out of memory"); return -1; }
        list = next;
    }
    if (is_post) {
        // No "Expect: 100-continue" round trip: send the body right away.
        struct curl_slist *next = fm_curl_lib.p_curl_slist_append(list, "Expect:");
        if (!next) { fm_curl_lib.p_curl_slist_free_all(list); fm_curl_lib.p_curl_easy_cleanup(curl); snprintf(out->error, sizeof out->error, "out of memory"); return -1; }
        list = next;
    }
    char errbuf[CURL_ERROR_SIZE];
    errbuf[0] = 0;
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_URL, url);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, is_post ? 0L : 1L);
    if (is_post) {
        fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_POST, 1L);
        fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
        fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body ? (const char *)body : "");
    }
    if (cancel_flag) {
        fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, fm_progress);
        fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_XFERINFODATA, (void *)cancel_flag);
    }
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, total_timeout_ms);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_USERAGENT, user_agent);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, fm_write);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, fm_header);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_HEADERDATA, out);
    fm_curl_lib.p_curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    CURLcode code = fm_curl_lib.p_curl_easy_perform(curl);
    out->curl_code = (int)code;
    fm_curl_lib.p_curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
    if (code == CURLE_ABORTED_BY_CALLBACK) out->cancelled = 1;
    if (code != CURLE_OK) {
        snprintf(out->error, sizeof out->error, "%s", errbuf[0] ? errbuf : fm_curl_lib.p_curl_easy_strerror(code));
    }
    fm_curl_lib.p_curl_slist_free_all(list);
    fm_curl_lib.p_curl_easy_cleanup(curl);
    return code == CURLE_OK ? 0 : 1;
}

void fm_http_response_free(fm_http_response *r) {
    if (!r) return;
    free(r->body);
    r->body = NULL;
    r->length = 0;
    free(r->headers);
    r->headers = NULL;
    r->headers_length = 0;
}
