#ifndef FCMCTL_BUILD_INFO_H
#define FCMCTL_BUILD_INFO_H

/* What the build recorded about itself, for `fcmctl version` and `fcm-emulator --version`. The values come from
   build_info_generated.h, which `make` writes (scripts/release/build-info.sh) and git ignores; a plain
   `swift build` has none and says "unknown". Only build_info.c includes that header, and this one never
   changes, so a new commit recompiles one C file and relinks the executables: no Swift module rebuilds. */
const char *fcm_build_commit(void);
const char *fcm_build_date(void);
const char *fcm_build_swift_version(void);

#endif
