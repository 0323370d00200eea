#ifndef FCM_MALLOC_ARENAS_H
#define FCM_MALLOC_ARENAS_H

/// Limits glibc's malloc to `count` arenas (mallopt M_ARENA_MAX); does nothing where there is no such option.
/// Returns 1 if the limit was set.
int fcm_limit_malloc_arenas(int count);

#endif
