#pragma once
// What the launcher (native/launcher/main.cc) does between reading its plan and execve, in this
// order: namespaces (namespaces.cc), then chdir and Landlock (landlock.cc; rule paths opened
// AFTER the namespaces, so that a rule on /tmp names the private /tmp), then seccomp
// (seccomp.cc), then the descriptors are closed and the command exec'd. Each step returns false
// and fills `failure` on error; main.cc reports it to confine.
//
// TypeScript decides everything (src/confine/launch.ts writes the plan, plan.cc reads it); the
// launcher only carries it out.
#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/errno_failure.h"

namespace arb {

// One step of the mount plan. TypeScript (src/confine/mount-plan.ts) orders the steps: parents
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
  uint64_t size = 0;   // tmpfs: its size limit in bytes (0: the kernel's default, half of RAM)
  unsigned int mode = 0;  // mask, tmpfs: the mode of its root (0: 0755 for a mask, 1777 for a tmpfs)
};

struct MountPlan {
  // Everything (recursively) read-only before `ops` run, so chmod/chown/utime/setxattr outside
  // the writable paths fail with EROFS.
  bool readOnlyRoot = true;
  std::vector<MountOp> ops;
};

// The most mount steps a plan may hold (one descriptor per bind is kept open at once).
constexpr size_t kMaxMountOps = 512;

struct NamespacePlan {
  bool enabled = false;  // user + mount (+ IPC) namespaces
  bool pid = false;      // a PID namespace with its own /proc
  bool net = false;      // a network namespace with only loopback
  uid_t uid = 0;         // the user's ids, mapped to themselves inside
  gid_t gid = 0;
  MountPlan mounts;
};

struct SeccompPlan {
  bool denyTerminalInjection = false;  // ioctl TIOCSTI and TIOCLINUX fail with EPERM
  bool denyNetwork = false;            // socket()/socketpair() for anything but AF_UNIX fail with
                                       // EACCES; io_uring_setup fails with ENOSYS
  bool allowTcp = false;               // with denyNetwork: TCP sockets are let through (for
                                       // Landlock's port rule: --allow-host without a netns)
};

struct PathRule {
  std::string path;
  uint64_t access = 0;
};

struct NetRule {
  uint64_t port = 0;
  uint64_t access = 0;
};

struct LandlockPlan {
  bool enabled = false;
  uint64_t handledFs = 0;
  uint64_t handledNet = 0;
  uint64_t scoped = 0;
  uint32_t restrictFlags = 0;
  std::vector<PathRule> rules;
  std::vector<NetRule> netRules;
};

// What the launcher says on stderr when a step fails and no one reads its report (confine
// became it): the first entry whose syscall and errno name match ("*" matches any). The text
// may hold {syscall}, {errno} and {path}.
struct FailureMessage {
  std::string syscall;
  std::string errnoName;
  int exitCode = 1;
  std::string text;
};

// Where the namespaces do not work (EnterNamespacesOrSayWhy finds it making the real ones):
// Landlock alone, with these network rights and seccomp, after saying `text` on stderr
// ({syscall}, {errno}, {path}: what failed); or, with `refuse`, saying it and running nothing.
struct Fallback {
  bool present = false;
  uint64_t handledNet = 0;
  bool denyNetwork = false;
  bool refuse = false;
  std::string text;
};

struct LaunchPlan {
  std::string cwd;
  std::string file;  // absolute
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=value
  std::vector<int> keepFds;      // sorted, each > 2: open in the command besides 0, 1, 2
  // An inherited descriptor of the directory to run in (fchdir; then closed, unless kept): what
  // confine opened and checked, whatever `cwd` (then only its name, for messages) leads to now.
  int cwdFd = -1;
  NamespacePlan namespaces;
  LandlockPlan landlock;
  SeccompPlan seccomp;
  // Spawned by confine: die with it (PR_SET_PDEATHSIG), and give up if it is already gone.
  pid_t parent = 0;
  // Enter the namespaces, then exit 0 instead of running anything: does this machine allow them?
  bool probe = false;
  // Without a PID namespace, stay as the command's parent (a child subreaper) and end what it
  // leaves running when it ends (confine waits, so the pid need not be the command's).
  bool reap = false;
  Fallback fallback;
  std::vector<FailureMessage> messages;
  // --allow-host: a listener on 127.0.0.1:proxyListen, made once the network namespace is
  // there and sent to confine over the report socket before the command runs. 0: none.
  uint16_t proxyListen = 0;
};

// Reads the plan's wire format (see plan.cc). False and *error set on a malformed plan.
bool ParsePlan(const std::string& bytes, LaunchPlan* plan, std::string* error);

// unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWIPC[|CLONE_NEWPID][|CLONE_NEWNET]), id maps, the
// mount plan, loopback up. Needs a single-threaded process with default signal dispositions and
// an empty signal mask, as the launcher is.
//
// With a PID namespace it forks twice: the calling process stays outside as a reaper, the first
// child is the namespace's init (it mounts the new /proc, reaps orphans, forwards signals), and
// the second child returns true to become the command. The reaper and init close every
// descriptor above 2 (so confine's report descriptor sees EOF when the command execs), wait, and
// _exit() with the command's status (the reaper re-raises a fatal signal). So on success this
// returns only in the command's process; on failure it returns false in whichever process
// failed, and the processes above it exit with that process's status.
bool EnterNamespaces(const NamespacePlan& plan, ErrnoFailure* failure);

// In the launcher's parent, when it forked the command as a child subreaper (no PID namespace):
// passes signals on, waits for the command, kills what it left running, exits as it did.
[[noreturn]] void SubreapAndExit(pid_t command, const sigset_t* mask);

// Whether a failure making the namespaces says they do not work on this machine at all, not
// that this plan cannot be carried out: unshare, the id maps, the first mounts (on /: the mount
// tree made private, the root read-only), the PID namespace's /proc, loopback, or a system call
// the kernel lacks. Such a failure is what a kernel without user namespaces, a container that
// forbids nesting them, or an LSM that strips their capabilities gives; a failure on a path the
// plan names is not, and is never a reason to run with less.
bool NamespacesUnsupported(const ErrnoFailure& failure);

// What EnterNamespacesOrSayWhy returned, and in which process.
enum class Entered {
  kYes,          // in the process that goes on to become the command
  kUnsupported,  // in the launcher, nothing made (the child is gone): *failure says why
  kFailed,       // in the process that failed, for a reason NamespacesUnsupported rejects
};

// EnterNamespaces in a child, the launcher waiting outside: there is no going back from
// unshare, so where the namespaces may not work (the plan has a fallback) they are tried for
// real in a child rather than probed first (which made and tore down a second set each start).
// The process that becomes the command writes one byte on a pipe first; the launcher then waits
// for the child and exits as it does (passing signals on as the reaper does). If, instead, a
// process failed in a way NamespacesUnsupported accepts, it writes the failure on the pipe and
// exits, and the launcher returns kUnsupported to run the fallback.
Entered EnterNamespacesOrSayWhy(const NamespacePlan& plan, ErrnoFailure* failure);

// landlock_create_ruleset, a rule per path (opened O_PATH), PR_SET_NO_NEW_PRIVS,
// landlock_restrict_self.
bool RestrictSelf(const LandlockPlan& plan, ErrnoFailure* failure);

// The byte that carries the proxy's listener on the report socket (a failure record starts
// with 'f'; EOF without either means the command was exec'd).
constexpr char kListenerRecord = 'L';

// socket, bind 127.0.0.1:port, listen in the current network namespace; the descriptor sent
// over `report` (SCM_RIGHTS, on the byte kListenerRecord), then closed (proxy_listener.cc).
bool SendLoopbackListener(uint16_t port, int report, ErrnoFailure* failure);

// PR_SET_NO_NEW_PRIVS, then one classic BPF filter. On a foreign architecture (i386 or x32
// system calls from an x86-64 process) the process is killed.
bool ApplySeccomp(const SeccompPlan& plan, ErrnoFailure* failure);

}  // namespace arb
