// A stand-in for macOS's <sys/clonefile.h>, so that native/darwin/*.cc can be compiled (syntax
// only, by scripts/check-darwin) and the clone engine's walk run (test/native/darwin/) on Linux.
// The declarations and values are those of the macOS SDK (xnu bsd/sys/clonefile.h); nothing
// here is used in the addon that macOS builds.
#pragma once
#include <stdint.h>

#define CLONE_NOFOLLOW 0x0001     /* Don't follow symbolic links */
#define CLONE_NOOWNERCOPY 0x0002  /* Don't copy ownership information from source */
#define CLONE_ACL 0x0004          /* Copy access control lists from source (macOS 13) */

#ifdef __cplusplus
extern "C" {
#endif
int clonefileat(int src_dirfd, const char* src, int dst_dirfd, const char* dst, uint32_t flags);
int fclonefileat(int srcfd, int dst_dirfd, const char* dst, uint32_t flags);
int clonefile(const char* src, const char* dst, uint32_t flags);
#ifdef __cplusplus
}
#endif
