#pragma once
// The layers confine puts around a command besides Landlock, each applied in the child between
// fork() and execve() by landlock_exec.cc, in this order: namespaces (namespaces.cc), then
// chdir and Landlock (rule paths opened AFTER the namespaces, so that a rule on /tmp names the
// private /tmp), then seccomp (seccomp.cc), then execve. Each returns false and fills `failure`
// on error; the caller reports it to the parent over its error pipe.
#include <napi.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "common/errno_error.h"

namespace arb {

// One step of the mount plan. TypeScript (src/confine/hardening.ts) orders the steps: parents
// before what is under them, so a bind lands inside the tmpfs masking its parent.
struct MountOp {
  enum Kind : int {
    kBindReadWrite,  // bind the path back onto itself, as it was before the root became read-only
    kBindReadOnly,   // the same, read-only (a readable path inside a masked directory)
    kMask,           // an empty tmpfs, read-only once what is bound under it is in place
    kTmpfs,          // a fresh, private, writable tmpfs (mode 1777): /tmp, /dev/shm
    kDevpts,         // a new devpts instance: only the pseudo-terminals the command opens
    kSymlink,        // a symbolic link at `path` to `target`, inside a mask, so that a readable
                     // path reached through a link in the home directory still resolves
  };
  Kind kind = kBindReadWrite;
  std::string path;    // absolute, resolved (for kSymlink: where the link is)
  std::string target;  // kSymlink only: the link's text, as readlink gave it
  std::string source;  // binds: what to bind at `path` when not `path` itself
};

struct MountPlan {
  // Everything (recursively) read-only before `ops` run, so chmod/chown/utime/setxattr outside
  // the writable paths fail with EROFS.
  bool readOnlyRoot = true;
  std::vector<MountOp> ops;
};

// The most mount steps a plan may hold (the child keeps one descriptor per bind on its stack).
constexpr size_t kMaxMountOps = 512;

struct NamespacePlan {
  bool enabled = false;  // user + mount (+ IPC) namespaces
  bool pid = false;      // a PID namespace with its own /proc
  bool net = false;      // a network namespace with only loopback
  uid_t uid = 0;         // the user's ids, mapped to themselves inside
  gid_t gid = 0;
  MountPlan mounts;
  // --allow-host (with net): a listener on 127.0.0.1:proxyPort made in the new network
  // namespace and sent over proxySocket to confine, whose proxy is the only way out. 0: none.
  uint16_t proxyPort = 0;
  int proxySocket = -1;
};

// Fills `plan` (enabled = true) from the object TypeScript built (NamespacePlanSpec in
// src/native.ts: {pid, net, uid, gid, readOnlyRoot, mounts: [{kind, path, target?, source?}]}).
// Throws a Napi::TypeError on a malformed one. Call it before fork(): it allocates.
void ParseNamespacePlan(Napi::Object spec, NamespacePlan* plan);

// unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWIPC[|CLONE_NEWPID][|CLONE_NEWNET]), id maps, the
// mount plan, loopback up. Must run in a single-threaded process (the child of fork()):
// unshare(CLONE_NEWUSER) fails with EINVAL in a multi-threaded one. It expects default signal
// dispositions and an empty signal mask, as landlockSpawn's child has.
//
// With a PID namespace it forks twice: the calling process stays outside as a reaper, the first
// child is the namespace's init (it mounts the new /proc, reaps orphans, forwards signals), and
// the second child returns true to become the command. The reaper and init close every
// descriptor above 2 (so the error pipe sees EOF when the command execs), wait, and _exit() with
// the command's status (the reaper re-raises a fatal signal). So on success this returns only in
// the command's process; on failure it returns false in whichever process failed, and the
// processes above it exit with that process's status.
bool EnterNamespaces(const NamespacePlan& plan, ErrnoFailure* failure);

// Makes a TCP listener on 127.0.0.1:port in the calling process's network namespace and sends
// its descriptor over the unix socket `sock` (SCM_RIGHTS), then closes it (proxy_listener.cc).
bool SendLoopbackListener(uint16_t port, int sock, ErrnoFailure* failure);

struct SeccompPlan {
  bool denyTerminalInjection = false;  // ioctl TIOCSTI and TIOCLINUX fail with EPERM
  bool denyNetwork = false;            // socket()/socketpair() for anything but AF_UNIX fail with
                                       // EACCES; io_uring_setup fails with ENOSYS
  bool allowTcp = false;               // with denyNetwork: TCP sockets are let through (for
                                       // Landlock's port rules: --allow-host without a netns)
};

// Fills `plan` from {denyTerminalInjection, denyNetwork}; throws a Napi::TypeError otherwise.
void ParseSeccompPlan(Napi::Object spec, SeccompPlan* plan);

// PR_SET_NO_NEW_PRIVS, then one classic BPF filter (built on the stack: safe after fork). On a
// foreign architecture (i386 or x32 system calls from an x86-64 process) the process is killed.
bool ApplySeccomp(const SeccompPlan& plan, ErrnoFailure* failure);

// Whether this kernel takes seccomp filters that return errno (no side effect).
bool SeccompFilterAvailable();

}  // namespace arb
