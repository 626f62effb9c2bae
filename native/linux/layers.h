#pragma once
// The layers confine puts around a command besides Landlock, each applied in the child between
// fork() and execve() by landlock_exec.cc, in this order: namespaces (namespaces.cc), then
// Landlock, then seccomp (seccomp.cc), then execve. Each returns false and fills `failure` on
// error; the caller reports it to the parent over its error pipe.
#include <sys/types.h>

#include <string>
#include <vector>

#include "common/errno_error.h"

namespace arb {

struct MountPlan {
  // Paths that stay writable; everything else is remounted read-only.
  std::vector<std::string> writable;
  // Paths hidden under an empty tmpfs (/run, /var/run, $XDG_RUNTIME_DIR).
  std::vector<std::string> masked;
  // Paths given a fresh, private tmpfs (/tmp); writable paths under them are bound back.
  std::vector<std::string> privateTmp;
};

struct NamespacePlan {
  bool enabled = false;  // user + mount namespaces
  bool pid = false;      // a PID namespace with its own /proc
  bool net = false;      // a network namespace with only loopback
  uid_t uid = 0;         // the user's ids, mapped to themselves inside
  gid_t gid = 0;
  MountPlan mounts;
};

// unshare(CLONE_NEWUSER|CLONE_NEWNS[|CLONE_NEWPID][|CLONE_NEWNET]), id maps, the mount plan.
// With a PID namespace it forks once more: the caller's process then waits for that child (the
// namespace's init) and _exit()s with its status, so this returns only in the child.
bool EnterNamespaces(const NamespacePlan& plan, ErrnoFailure* failure);

struct SeccompPlan {
  bool denyTerminalInjection = false;  // ioctl TIOCSTI and TIOCLINUX fail with EPERM
  bool denyNetwork = false;            // socket() for anything but AF_UNIX fails with EACCES
};

bool ApplySeccomp(const SeccompPlan& plan, ErrnoFailure* failure);

}  // namespace arb
