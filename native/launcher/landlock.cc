// Landlock in the launcher: the ruleset TypeScript built (src/confine/landlock.ts decides every
// right and every path), applied to the launcher's one thread just before it execs the command,
// so the domain is never on a thread that returns to JavaScript.
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/unique_fd.h"
#include "launcher/layers.h"

// Debian 12's <linux/landlock.h> stops at ABI 2, so the ABI is spelled out here from the
// kernel's UAPI; the rights themselves come from TypeScript as numbers.
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

namespace arb {
namespace {

constexpr int kRulePathBeneath = 1;
constexpr int kRuleNetPort = 2;

// The rights Landlock accepts on a rule whose object is not a directory: EXECUTE, WRITE_FILE,
// READ_FILE, TRUNCATE (ABI 3), IOCTL_DEV (ABI 5), RESOLVE_UNIX (ABI 9). Anything else on a
// file is EINVAL, so a path that turned from a directory into a file since TypeScript looked
// gets only these.
constexpr uint64_t kFileRights = (1ULL << 0) | (1ULL << 1) | (1ULL << 2) | (1ULL << 14) |
                                 (1ULL << 15) | (1ULL << 16);

struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

bool Fail(ErrnoFailure* f, int err, const char* syscall, const char* path = "") {
  f->err = err;
  f->syscall = syscall;
  f->path = path;
  return false;
}

}  // namespace

// landlock_create_ruleset(handled) -> for each rule: open(O_PATH) + fstat + landlock_add_rule
// -> prctl(PR_SET_NO_NEW_PRIVS) -> landlock_restrict_self. NO_NEW_PRIVS is what lets an
// unprivileged process restrict itself, and keeps set-user-ID programs from gaining privileges
// the domain would not bind. A rule path that vanished since TypeScript listed it is skipped:
// a missing grant only takes access away.
bool RestrictSelf(const LandlockPlan& s, ErrnoFailure* f) {
  RulesetAttr attr{s.handledFs, s.handledNet, s.scoped};
  // The smallest size that carries every non-zero field, so an older kernel is not handed a
  // struct larger than it knows.
  size_t size = s.scoped ? sizeof(RulesetAttr) : s.handledNet ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
  UniqueFd ruleset(static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0)));
  if (!ruleset.valid()) return Fail(f, errno, "landlock_create_ruleset");

  for (const PathRule& rule : s.rules) {
    UniqueFd fd(open(rule.path.c_str(), O_PATH | O_CLOEXEC));
    if (!fd.valid()) {
      int err = errno;
      if (err == ENOENT) continue;
      return Fail(f, err, "open", rule.path.c_str());
    }
    struct stat st;
    if (fstat(fd.get(), &st) != 0) return Fail(f, errno, "fstat", rule.path.c_str());
    PathBeneathAttr pb{};
    pb.allowed_access = S_ISDIR(st.st_mode) ? rule.access : rule.access & kFileRights;
    pb.parent_fd = fd.get();
    if (pb.allowed_access == 0) continue;
    if (syscall(SYS_landlock_add_rule, ruleset.get(), kRulePathBeneath, &pb, 0) != 0) {
      return Fail(f, errno, "landlock_add_rule", rule.path.c_str());
    }
  }
  for (const NetRule& rule : s.netRules) {
    NetPortAttr np{rule.access, rule.port};
    if (syscall(SYS_landlock_add_rule, ruleset.get(), kRuleNetPort, &np, 0) != 0) {
      return Fail(f, errno, "landlock_add_rule");
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Fail(f, errno, "prctl");
  if (syscall(SYS_landlock_restrict_self, ruleset.get(), s.restrictFlags) != 0) {
    return Fail(f, errno, "landlock_restrict_self");
  }
  return true;
}

}  // namespace arb
