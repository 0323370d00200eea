#ifndef FCMCTL_CCURL_SHIM_H
#define FCMCTL_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt and friends are variadic, which Swift cannot call; these typed wrappers can. */
typedef size_t (*fcm_curl_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);

static inline CURLcode fcm_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode fcm_easy_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode fcm_easy_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode fcm_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode fcm_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode fcm_easy_setopt_callback(CURL *h, CURLoption o, fcm_curl_data_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode fcm_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode fcm_easy_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode fcm_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

/* Restricting to HTTP(S) keeps a hostile redirect or URL from reaching file:// or other protocols. */
static inline CURLcode fcm_easy_restrict_http(CURL *h) {
#if LIBCURL_VERSION_NUM >= 0x075500
    return curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    return curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}
#endif
