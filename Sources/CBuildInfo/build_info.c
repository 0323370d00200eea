#include "build_info.h"

#if __has_include("build_info_generated.h")
#include "build_info_generated.h"
#endif

#ifndef FCM_BUILD_COMMIT
#define FCM_BUILD_COMMIT "unknown"
#endif
#ifndef FCM_BUILD_DATE
#define FCM_BUILD_DATE "unknown"
#endif
#ifndef FCM_BUILD_SWIFT_VERSION
#define FCM_BUILD_SWIFT_VERSION "unknown"
#endif

const char *fcm_build_commit(void) { return FCM_BUILD_COMMIT; }
const char *fcm_build_date(void) { return FCM_BUILD_DATE; }
const char *fcm_build_swift_version(void) { return FCM_BUILD_SWIFT_VERSION; }
