#ifndef FCMCTL_CCURL_SHIM_H
#define FCMCTL_CCURL_SHIM_H
#include <curl/curl.h>
/* The portable event loop waits in curl_multi_poll and is woken by curl_multi_wakeup (7.68). */
#if LIBCURL_VERSION_NUM < 0x074400
#error "fcmctl needs libcurl 7.68 or later"
#endif
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

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

/* The multi socket interface: curl says which sockets to watch and when to call it back, so a loop over
   epoll costs per event, not per transfer in flight. */
typedef int (*fcm_curl_socket_callback)(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp);
typedef int (*fcm_curl_timer_callback)(CURLM *multi, long timeout_ms, void *userp);
static inline CURLMcode fcm_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode fcm_multi_setopt_socket_callback(CURLM *m, fcm_curl_socket_callback f) {
    return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f);
}
static inline CURLMcode fcm_multi_setopt_timer_callback(CURLM *m, fcm_curl_timer_callback f) {
    return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, f);
}
/* Told when curl closes a socket, so a descriptor number it hands out again is never taken for the old one. */
typedef int (*fcm_curl_closesocket_callback)(void *clientp, curl_socket_t item);
static inline CURLcode fcm_easy_setopt_closesocket(CURL *h, fcm_curl_closesocket_callback f, void *clientp) {
    CURLcode code = curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, f);
    return code != CURLE_OK ? code : curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, clientp);
}
static inline CURLMcode fcm_multi_socket_timeout(CURLM *m, int *running) {
    return curl_multi_socket_action(m, CURL_SOCKET_TIMEOUT, 0, running);
}

#ifdef __linux__
/* struct epoll_event is packed on x86-64, which Swift cannot lay out: these take and give plain values. */
static inline int fcm_epoll_update(int epfd, int op, int fd, int in, int out) {
    struct epoll_event event;
    event.events = (in ? EPOLLIN : 0) | (out ? EPOLLOUT : 0);
    event.data.u64 = 0;
    event.data.fd = fd;
    return epoll_ctl(epfd, op, fd, &event);
}

/* Waits up to timeout_ms; fills fds and curl's CURL_CSELECT_* flags; returns how many (or -1). */
static inline int fcm_epoll_wait(int epfd, int *fds, int *flags, int max, int timeout_ms) {
    struct epoll_event events[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        fds[i] = events[i].data.fd;
        int f = 0;
        if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) f |= CURL_CSELECT_IN;
        if (events[i].events & EPOLLOUT) f |= CURL_CSELECT_OUT;
        if (events[i].events & EPOLLERR) f |= CURL_CSELECT_ERR;
        flags[i] = f;
    }
    return n;
}
#endif

/* Restricting to HTTP(S) keeps a hostile redirect or URL from reaching file:// or other protocols. */
static inline CURLcode fcm_easy_restrict_http(CURL *h) {
#if LIBCURL_VERSION_NUM >= 0x075500
    return curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    return curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}
#endif
