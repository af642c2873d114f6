// Typed wrappers around libcurl's variadic calls, which Swift cannot call directly. Nothing else.
#ifndef GATEWAY_CCURL_SHIM_H
#define GATEWAY_CCURL_SHIM_H
#include <curl/curl.h>

typedef size_t (*gw_curl_data_callback)(char *buffer, size_t size, size_t count, void *context);
typedef int (*gw_curl_seek_callback)(void *context, curl_off_t offset, int origin);
typedef int (*gw_curl_xferinfo_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode gw_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gw_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gw_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gw_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gw_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gw_curl_setopt_data_callback(CURL *handle, CURLoption option, gw_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gw_curl_setopt_seek_callback(CURL *handle, gw_curl_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}
static inline CURLcode gw_curl_setopt_xferinfo_callback(CURL *handle, gw_curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
static inline CURLcode gw_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode gw_curl_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode gw_curl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
#endif
