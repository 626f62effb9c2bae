// The namespace layer: the command gets its own user, mount, IPC, PID (and, with --no-network,
// network) namespaces, where the file system outside the writable paths is read-only, /run and
// the like are masked, /tmp is private, and /proc shows only the command's own processes.
// TypeScript (src/confine/mount-plan.ts) decides every path and the order of the mount steps;
// this file carries them out in the launcher (a single-threaded process of its own, so
// unshare(CLONE_NEWUSER) works and nothing here runs in a fork of Node), and reports the errno of
// what failed.
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "common/errno_failure.h"
#include "common/unique_fd.h"
#include "launcher/layers.h"

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

namespace arb {
namespace {

// Takes the errno as read by the caller first, and the path as a C string, so that no
// allocation (a std::string made for the argument) runs before errno is read.
bool Fail(ErrnoFailure* f, int err, const char* syscall, const char* path = "") {
  f->err = err;
  f->syscall = syscall;
  f->path = path;
  return false;
}

// --- small helpers ----------------------------------------------------------------------------

// Writes "N N 1\n" (an id mapped to itself) into buf; returns its length.
size_t FormatIdMap(char* buf, size_t size, unsigned long id) {
  char digits[24];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + id % 10);
    id /= 10;
  } while (id != 0 && n < sizeof digits);
  size_t len = 0;
  for (int copy = 0; copy < 2; copy++) {
    for (size_t i = n; i > 0 && len < size; i--) buf[len++] = digits[i - 1];
    if (len < size) buf[len++] = ' ';
  }
  if (len + 2 < size) {
    buf[len++] = '1';
    buf[len++] = '\n';
  }
  return len;
}

bool WriteProcFile(const char* path, const char* data, size_t len, ErrnoFailure* f) {
  UniqueFd fd(open(path, O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return Fail(f, errno, "open", path);
  ssize_t n;
  do {
    n = write(fd.get(), data, len);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(len)) return Fail(f, n < 0 ? errno : EIO, "write", path);
  return true;
}

// mkdir -p of the directories above `path` (and of `path` itself when `dir`; otherwise an empty
// file there), for a mount point or a link inside a tmpfs this plan mounted. `len` bytes of
// `path` count. Existing entries are fine.
bool MakeMountPoint(const char* path, size_t len, bool dir, ErrnoFailure* f) {
  char buf[PATH_MAX];
  if (len >= sizeof buf || len == 0 || path[0] != '/') return Fail(f, ENAMETOOLONG, "mkdir", path);
  memcpy(buf, path, len);
  buf[len] = '\0';
  for (size_t i = 1; i < len; i++) {
    if (buf[i] != '/') continue;
    buf[i] = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return Fail(f, errno, "mkdir", buf);
    buf[i] = '/';
  }
  if (dir) {
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return Fail(f, errno, "mkdir", buf);
    return true;
  }
  int fd = open(buf, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno != EEXIST) return Fail(f, errno, "open", buf);
  if (fd >= 0) close(fd);
  return true;
}

bool Exists(const std::string& path) {
  struct stat st;
  return fstatat(AT_FDCWD, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int OpenTree(int dfd, const char* path, unsigned int flags) {
  return static_cast<int>(syscall(SYS_open_tree, dfd, path, flags));
}

int MoveMount(int fromDfd, const char* fromPath, int toDfd, const char* toPath, unsigned int flags) {
  return static_cast<int>(syscall(SYS_move_mount, fromDfd, fromPath, toDfd, toPath, flags));
}

int SetReadOnly(int dfd, const char* path, unsigned int flags) {
  struct mount_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.attr_set = MOUNT_ATTR_RDONLY;
  return static_cast<int>(syscall(SYS_mount_setattr, dfd, path, flags, &attr, sizeof attr));
}

// --- the mount plan ------------------------------------------------------------------------

// Runs in the new mount namespace:
//   mount(/, MS_REC|MS_PRIVATE)             nothing done here reaches the host, nor the reverse
//   open_tree(OPEN_TREE_CLONE|AT_RECURSIVE) a detached copy of each path to bind back, taken
//                                           before anything is mounted over its parents and
//                                           while it is still writable
//   mount_setattr(/, AT_RECURSIVE, RDONLY)  every mount read-only: chmod, chown, utimes and
//                                           setxattr outside now fail with EROFS
//   in order: mount(tmpfs) for masks and private tmpfs; mount(devpts, newinstance); mkdir +
//   move_mount for binds (the copy of a readable path made read-only first); symlink for links
//   mount_setattr(mask, RDONLY)             each mask read-only once its binds are in place
// Mounts copied from the host into a namespace owned by a new user namespace are locked
// together, so the command cannot unmount a mask to see what is under it, nor make a read-only
// mount writable again (MNT_LOCK_READONLY) in a namespace of its own.
bool ApplyMounts(const MountPlan& plan, ErrnoFailure* f) {
  if (plan.ops.size() > kMaxMountOps) return Fail(f, E2BIG, "mount");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return Fail(f, errno, "mount", "/");

  int trees[kMaxMountOps];
  for (size_t i = 0; i < plan.ops.size(); i++) trees[i] = -1;
  // The copies close when this returns (they are attached by then, or we failed).
  struct Closer {
    int* fds;
    size_t n;
    ~Closer() {
      for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0) close(fds[i]);
    }
  } closer{trees, plan.ops.size()};

  for (size_t i = 0; i < plan.ops.size(); i++) {
    const MountOp& op = plan.ops[i];
    if (op.kind != MountOp::kBindReadWrite && op.kind != MountOp::kBindReadOnly) continue;
    const std::string& from = op.source.empty() ? op.path : op.source;
    trees[i] = OpenTree(AT_FDCWD, from.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (trees[i] < 0) {
      // A path that vanished since TypeScript looked is not bound: its absence only takes
      // access away.
      if (errno == ENOENT) continue;
      return Fail(f, errno, "open_tree", from.c_str());
    }
    if (op.kind == MountOp::kBindReadOnly && SetReadOnly(trees[i], "", AT_EMPTY_PATH | AT_RECURSIVE) != 0) {
      return Fail(f, errno, "mount_setattr", op.path.c_str());
    }
  }

  if (plan.readOnlyRoot && SetReadOnly(AT_FDCWD, "/", AT_RECURSIVE) != 0) return Fail(f, errno, "mount_setattr", "/");

  for (size_t i = 0; i < plan.ops.size(); i++) {
    const MountOp& op = plan.ops[i];
    switch (op.kind) {
      case MountOp::kMask:
      case MountOp::kTmpfs: {
        if (!Exists(op.path) && !MakeMountPoint(op.path.c_str(), op.path.size(), true, f)) return false;
        // A private tmpfs has a size limit (TypeScript's choice, in bytes), so a command cannot
        // fill the machine's memory through /tmp or /dev/shm.
        char mode[32];
        snprintf(mode, sizeof mode, "mode=%04o", op.mode != 0 ? op.mode : op.kind == MountOp::kMask ? 0755U : 01777U);
        std::string options = mode;
        if (op.size > 0) options += ",size=" + std::to_string(op.size);
        if (mount("tmpfs", op.path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
          return Fail(f, errno, "mount", op.path.c_str());
        }
        break;
      }
      case MountOp::kDevpts:
        // The host's /dev/pts holds every terminal of the user, which the command could open
        // and read keystrokes from. A new instance holds only the ones it opens; /dev/ptmx finds
        // it as the "pts" beside it. Its own terminal stays open as fds 0-2 and /dev/tty.
        if (mount("devpts", op.path.c_str(), "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") != 0) {
          return Fail(f, errno, "mount", op.path.c_str());
        }
        break;
      case MountOp::kBindReadWrite:
      case MountOp::kBindReadOnly: {
        if (trees[i] < 0) break;
        if (!Exists(op.path)) {
          struct stat st;
          if (fstat(trees[i], &st) != 0) return Fail(f, errno, "fstat", op.path.c_str());
          if (!MakeMountPoint(op.path.c_str(), op.path.size(), S_ISDIR(st.st_mode), f)) return false;
        }
        if (MoveMount(trees[i], "", AT_FDCWD, op.path.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0) {
          return Fail(f, errno, "move_mount", op.path.c_str());
        }
        break;
      }
      case MountOp::kSymlink: {
        size_t slash = op.path.rfind('/');
        if (slash != 0 && slash != std::string::npos && !MakeMountPoint(op.path.c_str(), slash, true, f)) return false;
        if (symlink(op.target.c_str(), op.path.c_str()) != 0 && errno != EEXIST) {
          return Fail(f, errno, "symlink", op.path.c_str());
        }
        break;
      }
    }
  }

  for (const MountOp& op : plan.ops) {
    if (op.kind == MountOp::kMask && SetReadOnly(AT_FDCWD, op.path.c_str(), 0) != 0) {
      return Fail(f, errno, "mount_setattr", op.path.c_str());
    }
  }
  return true;
}

// socket(AF_INET) + ioctl(SIOCGIFFLAGS/SIOCSIFFLAGS): a new network namespace has only a
// loopback interface, and it starts down.
bool LoopbackUp(ErrnoFailure* f) {
  UniqueFd sock(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) return Fail(f, errno, "socket");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  memcpy(ifr.ifr_name, "lo", 3);
  if (ioctl(sock.get(), SIOCGIFFLAGS, &ifr) != 0) return Fail(f, errno, "ioctl", "lo");
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
  if (ioctl(sock.get(), SIOCSIFFLAGS, &ifr) != 0) return Fail(f, errno, "ioctl", "lo");
  return true;
}

// --- the PID namespace's two waiting processes ---------------------------------------------

// Where a signal sent to the reaper or init goes (the process below it). 0 until it exists.
volatile sig_atomic_t gForwardTo = 0;

// Signals a person or a program sends to confine, passed down to the command. Signals the
// terminal sends (Ctrl-C, Ctrl-\, a resize, a hangup) reach the foreground process group
// directly, the command included, and come with si_code SI_KERNEL: passing those down as well
// would deliver each twice, and a second Ctrl-C quits some programs.
const int kForwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

void ForwardSignal(int sig, siginfo_t* info, void*) {
  int saved = errno;
  pid_t to = gForwardTo;
  if (to > 0 && info != nullptr && info->si_code <= 0) kill(to, sig);
  errno = saved;
}

void InstallForwarding() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = ForwardSignal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&sa.sa_mask);
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
}

void DefaultForwarded() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
}

void BlockAll(sigset_t* old) {
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, old);
}

// What init leaves for the reaper: the command's wait status, which init cannot reproduce (init
// ignores the signals that killed the command).
struct SharedStatus {
  volatile int set;
  volatile int status;
};

// Ends this process as `status` says: the same exit code, or the same signal (without a core
// dump: the command dumped its own).
[[noreturn]] void ExitAs(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(sig, &sa, nullptr);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, nullptr);
    kill(getpid(), sig);
    _exit(128 + sig);
  }
  _exit(127);
}

void CloseAbove2() {
  if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
    for (int fd = 3; fd < 1024; fd++) close(fd);
  }
}

// The reaper, outside the namespace: waits for init and exits as the command did.
[[noreturn]] void Reap(pid_t init, SharedStatus* shared, const sigset_t* mask) {
  CloseAbove2();
  gForwardTo = init;
  InstallForwarding();
  sigprocmask(SIG_SETMASK, mask, nullptr);
  int status = 0;
  while (waitpid(init, &status, 0) < 0) {
    if (errno != EINTR) _exit(127);
  }
  if (shared->set) ExitAs(shared->status);
  ExitAs(status);
}

// Init, PID 1 of the namespace: reaps every orphan, and when the command ends, records its
// status and exits, which kills whatever the command left running in the namespace.
[[noreturn]] void Init(pid_t command, SharedStatus* shared, const sigset_t* mask) {
  CloseAbove2();
  gForwardTo = command;
  InstallForwarding();
  sigprocmask(SIG_SETMASK, mask, nullptr);
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      _exit(127);
    }
    if (pid == command) {
      shared->status = status;
      shared->set = 1;
      if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
      _exit(128 + WTERMSIG(status));
    }
  }
}

// Kills, with SIGKILL, every process whose parent is this one but `except`, by a look at /proc:
// what the command left running was reparented here (PR_SET_CHILD_SUBREAPER). Returns how many.
int KillChildren(pid_t except) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return 0;
  pid_t self = getpid();
  int killed = 0;
  while (struct dirent* e = readdir(proc)) {
    char* end = nullptr;
    long pid = strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0 || pid == except) continue;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) continue;
    char buf[512];
    ssize_t n = read(fd.get(), buf, sizeof buf - 1);
    if (n <= 0) continue;
    buf[n] = '\0';
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so from the last ')'.
    char* close = strrchr(buf, ')');
    if (close == nullptr) continue;
    char state;
    long ppid;
    if (sscanf(close + 1, " %c %ld", &state, &ppid) != 2 || ppid != self) continue;
    if (kill(static_cast<pid_t>(pid), SIGKILL) == 0) killed++;
  }
  closedir(proc);
  return killed;
}

}  // namespace

// The launcher's parent, outside the command, when there is no PID namespace to end what the
// command leaves running: a child subreaper (set before the command was forked), it passes
// signals on by the rule above, waits for the command, then kills what is left (reparented here
// however it detached) until nothing is, and exits as the command did.
[[noreturn]] void SubreapAndExit(pid_t command, const sigset_t* mask) {
  CloseAbove2();
  gForwardTo = command;
  InstallForwarding();
  sigprocmask(SIG_SETMASK, mask, nullptr);
  int commandStatus = -1;
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing is left
    }
    if (pid == command) {
      commandStatus = status;
      gForwardTo = 0;
    }
    if (commandStatus != -1) KillChildren(0);
  }
  if (commandStatus == -1) _exit(127);
  ExitAs(commandStatus);
}

// unshare -> setgroups "deny", uid_map, gid_map (the user mapped to itself, so files keep
// their owners) -> the mount plan -> loopback up -> [fork: reaper | fork: init | command].
bool EnterNamespaces(const NamespacePlan& plan, ErrnoFailure* failure) {
  if (!plan.enabled) return true;
  int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC;
  if (plan.pid) flags |= CLONE_NEWPID;
  if (plan.net) flags |= CLONE_NEWNET;
  if (unshare(flags) != 0) return Fail(failure, errno, "unshare");

  char map[64];
  if (!WriteProcFile("/proc/self/setgroups", "deny", 4, failure)) return false;
  size_t len = FormatIdMap(map, sizeof map, plan.uid);
  if (!WriteProcFile("/proc/self/uid_map", map, len, failure)) return false;
  len = FormatIdMap(map, sizeof map, plan.gid);
  if (!WriteProcFile("/proc/self/gid_map", map, len, failure)) return false;

  if (!ApplyMounts(plan.mounts, failure)) return false;
  if (plan.net && !LoopbackUp(failure)) return false;
  if (!plan.pid) return true;

  void* page = mmap(nullptr, sizeof(SharedStatus), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return Fail(failure, errno, "mmap");
  SharedStatus* shared = static_cast<SharedStatus*>(page);
  shared->set = 0;

  // Signals stay blocked across each fork, so that none reaches a handler meant for the other
  // side; each process then installs its own and restores the mask.
  sigset_t mask;
  BlockAll(&mask);
  pid_t init = fork();
  if (init < 0) {
    int err = errno;
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    return Fail(failure, err, "fork");
  }
  if (init > 0) Reap(init, shared, &mask);

  // Init. If the reaper is killed, init goes, and with it the whole namespace.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    int err = errno;  // before sigprocmask, which may change it
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    return Fail(failure, err, "prctl");
  }
  // A /proc of this PID namespace, mounted by a process in it: the command sees its own
  // processes only. nosuid/nodev/noexec: at least as strict as a host /proc usually is, which a
  // user namespace must keep.
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    int err = errno;
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    return Fail(failure, err, "mount", "/proc");
  }
  pid_t command = fork();
  if (command < 0) {
    int err = errno;
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    return Fail(failure, err, "fork");
  }
  if (command > 0) Init(command, shared, &mask);

  // The command.
  munmap(page, sizeof(SharedStatus));
  DefaultForwarded();
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  return true;
}

bool NamespacesUnsupported(const ErrnoFailure& f) {
  if (f.err == ENOSYS || f.syscall == "unshare") return true;
  if (f.path.rfind("/proc/self/", 0) == 0) return true;  // setgroups, uid_map, gid_map
  if ((f.syscall == "mount" || f.syscall == "mount_setattr") && (f.path == "/" || f.path == "/proc")) return true;
  return f.path == "lo";  // loopback in a new network namespace
}

// pipe2 -> fork -> child: EnterNamespaces -> the command's process writes 'K' | a process that
// failed (NamespacesUnsupported) writes 'F' "syscall\0errno\0path\0" and exits. The launcher
// reads: 'K' -> waits for the child and exits as it does; 'F' -> waits for the child, returns
// kUnsupported; EOF -> the child failed otherwise and said so itself: exits as it did.
Entered EnterNamespacesOrSayWhy(const NamespacePlan& plan, ErrnoFailure* failure) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    Fail(failure, errno, "pipe2");
    return Entered::kFailed;
  }
  UniqueFd readEnd(p[0]);
  UniqueFd writeEnd(p[1]);
  pid_t launcher = getpid();
  sigset_t mask;
  BlockAll(&mask);
  pid_t child = fork();
  if (child < 0) {
    int err = errno;
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    Fail(failure, err, "fork");
    return Entered::kFailed;
  }
  if (child == 0) {
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    readEnd.reset();
    // The launcher gone (confine killed outright): so is everything below it.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
      Fail(failure, errno, "prctl");
      return Entered::kFailed;
    }
    if (getppid() != launcher) _exit(1);
    if (EnterNamespaces(plan, failure)) {
      ssize_t ignored = write(writeEnd.get(), "K", 1);
      (void)ignored;
      return Entered::kYes;  // writeEnd closes here; the reaper and init closed theirs
    }
    if (!NamespacesUnsupported(*failure)) return Entered::kFailed;
    std::string record = "F" + failure->syscall + '\0' + std::to_string(failure->err) + '\0' + failure->path + '\0';
    ssize_t ignored = write(writeEnd.get(), record.data(), record.size());
    (void)ignored;
    _exit(1);
  }
  writeEnd.reset();
  std::string got;
  char buf[512];
  for (;;) {
    ssize_t n = read(readEnd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
    if (got[0] == 'K' || std::count(got.begin(), got.end(), '\0') >= 3) break;
  }
  readEnd.reset();
  if (!got.empty() && got[0] == 'K') {
    // The reaper's part, one level up: signals passed on to the child, its status taken as ours.
    SharedStatus none = {0, 0};
    Reap(child, &none, &mask);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  size_t a = got.find('\0');
  size_t b = a == std::string::npos ? a : got.find('\0', a + 1);
  size_t c = b == std::string::npos ? b : got.find('\0', b + 1);
  if (got.empty() || got[0] != 'F' || c == std::string::npos) {
    // The child failed and reported it itself (or was killed): end as it did.
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    ExitAs(status);
  }
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  failure->syscall = got.substr(1, a - 1);
  failure->err = atoi(got.substr(a + 1, b - a - 1).c_str());
  failure->path = got.substr(b + 1, c - b - 1);
  return Entered::kUnsupported;
}

}  // namespace arb
