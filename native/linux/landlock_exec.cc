// Confining a command with Landlock, in one native call that ends in execve.
//
// A Landlock domain binds the thread that calls landlock_restrict_self(), so it is never applied
// to a Node thread that then returns to JavaScript: either this thread becomes the command
// (landlockExec: restrict, then execve in the same call; execve ends the other threads), or a
// forked child does (landlockSpawn). TypeScript (src/confine/landlock.ts) decides every right and
// every path; this file only carries them out and reports the errno of what failed.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/errno_error.h"
#include "common/unique_fd.h"
#include "linux/error_pipe.h"
#include "linux/layers.h"
#include "linux/modules.h"

// Debian 12's <linux/landlock.h> stops at ABI 2, so the ABI is spelled out here from the
// kernel's UAPI; the rights themselves come from TypeScript as numbers.
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace arb {
namespace {

constexpr uint32_t kCreateRulesetVersion = 1U << 0;
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

struct PathRule {
  std::string path;
  uint64_t access;
};

struct NetRule {
  uint64_t port;
  uint64_t access;
};

// Everything the child needs, built before fork() so that the child allocates nothing.
struct ExecSpec {
  uint64_t handledFs = 0;
  uint64_t handledNet = 0;
  uint64_t scoped = 0;
  uint32_t restrictFlags = 0;
  std::vector<PathRule> rules;
  std::vector<NetRule> netRules;
  std::string file;
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd;
  std::vector<int> keepFds;  // sorted, each > 2
  bool hasNamespaces = false;
  NamespacePlan namespaces;
  SeccompPlan seccomp;

  // Prepared pointer arrays.
  std::vector<char*> argvp;
  std::vector<char*> envp;
  std::vector<char*> shArgvp;  // /bin/sh FILE ARGS…, for a script without #! (ENOEXEC)
};

// A failure in a place that must not allocate: static strings only.
struct Failure {
  int err = 0;
  const char* syscall = "";
  const char* path = "";
  bool confined = false;  // the calling thread was already restricted
};

// What the child writes to its error pipe when it cannot become the command. Under PIPE_BUF,
// so it arrives whole or not at all.
struct WireFailure {
  int32_t err;
  int32_t confined;
  char syscall[48];
  char path[1024];
};

bool Fail(Failure* f, int err, const char* syscall, const char* path = "") {
  f->err = err;
  f->syscall = syscall;
  f->path = path;
  return false;
}

uint64_t BigIntValue(Napi::Value v, const char* what) {
  if (v.IsBigInt()) {
    bool lossless = true;
    uint64_t n = v.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) throw Napi::TypeError::New(v.Env(), std::string(what) + " does not fit 64 bits");
    return n;
  }
  if (v.IsNumber()) return static_cast<uint64_t>(v.As<Napi::Number>().Int64Value());
  if (v.IsUndefined() || v.IsNull()) return 0;
  throw Napi::TypeError::New(v.Env(), std::string(what) + " must be a bigint");
}

std::string StringValue(Napi::Value v, const char* what) {
  if (!v.IsString()) throw Napi::TypeError::New(v.Env(), std::string(what) + " must be a string");
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s.find('\0') != std::string::npos) {
    throw Napi::TypeError::New(v.Env(), std::string(what) + " contains a NUL byte");
  }
  return s;
}

std::vector<std::string> StringArray(Napi::Value v, const char* what) {
  std::vector<std::string> out;
  if (v.IsUndefined() || v.IsNull()) return out;
  if (!v.IsArray()) throw Napi::TypeError::New(v.Env(), std::string(what) + " must be an array");
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) out.push_back(StringValue(a.Get(i), what));
  return out;
}

ExecSpec ParseSpec(Napi::Object o) {
  Napi::Env env = o.Env();
  ExecSpec s;
  s.handledFs = BigIntValue(o.Get("handledAccessFs"), "handledAccessFs");
  s.handledNet = BigIntValue(o.Get("handledAccessNet"), "handledAccessNet");
  s.scoped = BigIntValue(o.Get("scoped"), "scoped");
  Napi::Value flags = o.Get("restrictFlags");
  if (flags.IsNumber()) s.restrictFlags = flags.As<Napi::Number>().Uint32Value();
  if (s.handledFs == 0) throw Napi::TypeError::New(env, "handledAccessFs must not be empty");

  Napi::Value rules = o.Get("rules");
  if (!rules.IsArray()) throw Napi::TypeError::New(env, "rules must be an array");
  Napi::Array ra = rules.As<Napi::Array>();
  for (uint32_t i = 0; i < ra.Length(); i++) {
    Napi::Object r = ra.Get(i).As<Napi::Object>();
    s.rules.push_back({StringValue(r.Get("path"), "rules[].path"), BigIntValue(r.Get("access"), "rules[].access")});
  }
  Napi::Value net = o.Get("netRules");
  if (net.IsArray()) {
    Napi::Array na = net.As<Napi::Array>();
    for (uint32_t i = 0; i < na.Length(); i++) {
      Napi::Object r = na.Get(i).As<Napi::Object>();
      s.netRules.push_back({BigIntValue(r.Get("port"), "netRules[].port"), BigIntValue(r.Get("access"), "netRules[].access")});
    }
  }

  s.file = StringValue(o.Get("file"), "file");
  s.argv = StringArray(o.Get("argv"), "argv");
  if (s.argv.empty()) throw Napi::TypeError::New(env, "argv must not be empty");
  s.env = StringArray(o.Get("env"), "env");
  s.cwd = StringValue(o.Get("cwd"), "cwd");

  Napi::Value keep = o.Get("keepFds");
  if (keep.IsArray()) {
    Napi::Array ka = keep.As<Napi::Array>();
    for (uint32_t i = 0; i < ka.Length(); i++) {
      int fd = ka.Get(i).As<Napi::Number>().Int32Value();
      if (fd > 2) s.keepFds.push_back(fd);
    }
    std::sort(s.keepFds.begin(), s.keepFds.end());
    s.keepFds.erase(std::unique(s.keepFds.begin(), s.keepFds.end()), s.keepFds.end());
  }

  // The hardening layers parse their own plans (namespaces.cc, seccomp.cc), here, before fork().
  Napi::Value ns = o.Get("namespaces");
  if (ns.IsObject()) {
    s.hasNamespaces = true;
    ParseNamespacePlan(ns.As<Napi::Object>(), &s.namespaces);
  }
  Napi::Value sc = o.Get("seccomp");
  if (sc.IsObject()) ParseSeccompPlan(sc.As<Napi::Object>(), &s.seccomp);

  for (auto& a : s.argv) s.argvp.push_back(const_cast<char*>(a.c_str()));
  s.argvp.push_back(nullptr);
  for (auto& e : s.env) s.envp.push_back(const_cast<char*>(e.c_str()));
  s.envp.push_back(nullptr);
  static char kSh[] = "/bin/sh";
  s.shArgvp.push_back(kSh);
  s.shArgvp.push_back(const_cast<char*>(s.file.c_str()));
  for (size_t i = 1; i < s.argv.size(); i++) s.shArgvp.push_back(const_cast<char*>(s.argv[i].c_str()));
  s.shArgvp.push_back(nullptr);
  return s;
}

// Node ignores SIGPIPE and libuv installs handlers; ignored signals and the signal mask survive
// execve, so the command would start with SIGPIPE ignored. It gets the defaults a shell gives.
void ResetSignals() {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &dfl, nullptr);  // EINVAL for the C library's reserved signals: harmless
  }
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, nullptr);
}

// landlock_create_ruleset(handled) -> for each rule: open(O_PATH) + fstat + landlock_add_rule
// -> prctl(PR_SET_NO_NEW_PRIVS) -> landlock_restrict_self. NO_NEW_PRIVS is what lets an
// unprivileged process restrict itself, and keeps set-user-ID programs from gaining privileges
// the domain would not bind. A rule path that vanished since TypeScript listed it is skipped:
// a missing grant only takes access away.
bool RestrictSelf(const ExecSpec& s, Failure* f) {
  RulesetAttr attr{s.handledFs, s.handledNet, s.scoped};
  // The smallest size that carries every non-zero field, so an older kernel is not handed a
  // struct larger than it knows.
  size_t size = s.scoped ? sizeof(RulesetAttr) : s.handledNet ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
  UniqueFd ruleset(static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0)));
  if (!ruleset.valid()) return Fail(f, errno, "landlock_create_ruleset");

  for (const PathRule& rule : s.rules) {
    UniqueFd fd(open(rule.path.c_str(), O_PATH | O_CLOEXEC));
    if (!fd.valid()) {
      if (errno == ENOENT) continue;
      return Fail(f, errno, "open", rule.path.c_str());
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

// Marks every descriptor above 2 close-on-exec except the ones kept for the command, and clears
// the flag on those and on 0, 1, 2. Marking rather than closing leaves the other Node threads' descriptors
// intact until execve ends those threads. close_range(CLOSE_RANGE_CLOEXEC) is Linux 5.11, older
// than any kernel with Landlock ABI 2.
bool SealDescriptors(const ExecSpec& s, Failure* f) {
  unsigned int from = 3;
  for (int keep : s.keepFds) {
    if (static_cast<unsigned int>(keep) > from &&
        close_range(from, static_cast<unsigned int>(keep) - 1, CLOSE_RANGE_CLOEXEC) != 0) {
      return Fail(f, errno, "close_range");
    }
    int flags = fcntl(keep, F_GETFD);
    if (flags < 0 || fcntl(keep, F_SETFD, flags & ~FD_CLOEXEC) != 0) return Fail(f, errno, "fcntl");
    from = static_cast<unsigned int>(keep) + 1;
  }
  if (close_range(from, ~0U, CLOSE_RANGE_CLOEXEC) != 0) return Fail(f, errno, "close_range");
  // Node marks the standard streams close-on-exec at start-up (uv_disable_stdio_inheritance),
  // and libuv may have left them non-blocking: the command gets them open and blocking.
  for (int fd = 0; fd <= 2; fd++) {
    int fdFlags = fcntl(fd, F_GETFD);
    if (fdFlags >= 0 && (fdFlags & FD_CLOEXEC)) fcntl(fd, F_SETFD, fdFlags & ~FD_CLOEXEC);
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK)) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  }
  return true;
}

// chdir -> Landlock -> seccomp -> seal descriptors -> execve (and /bin/sh FILE for a file
// without #!, as execvp does). Returns only on failure. Everything it touches was built before
// fork(), so it is safe in the child of a multi-threaded process.
void ConfineAndExec(const ExecSpec& s, Failure* f, bool resetSignals) {
  if (chdir(s.cwd.c_str()) != 0) {
    Fail(f, errno, "chdir", s.cwd.c_str());
    return;
  }
  if (!RestrictSelf(s, f)) return;
  f->confined = true;
  if (s.seccomp.denyTerminalInjection || s.seccomp.denyNetwork) {
    ErrnoFailure ef;
    if (!ApplySeccomp(s.seccomp, &ef)) {
      Fail(f, ef.err, "seccomp");
      return;
    }
  }
  if (!SealDescriptors(s, f)) return;
  if (resetSignals) ResetSignals();
  execve(s.file.c_str(), s.argvp.data(), s.envp.data());
  if (errno == ENOEXEC) execve(s.shArgvp[0], s.shArgvp.data(), s.envp.data());
  Fail(f, errno, "execve", s.file.c_str());
}

Napi::Error FailureError(Napi::Env env, int err, const std::string& syscall, const std::string& path,
                         bool confined) {
  Napi::Error e = ErrnoError(env, err, syscall, path);
  e.Set("confined", Napi::Boolean::New(env, confined));
  return e;
}

// landlockAbi() -> the ABI version, or -errno (-ENOSYS: no Landlock in this kernel;
// -EOPNOTSUPP: built in but disabled at boot). TypeScript decides what it means.
Napi::Value LandlockAbi(const Napi::CallbackInfo& info) {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return Napi::Number::New(info.Env(), abi < 0 ? -errno : static_cast<double>(abi));
}

// landlockExec(spec): this thread becomes the confined command. Returns only on failure, as an
// error with errno/syscall/path and `confined`: when true the calling thread is already
// restricted, and the caller must only report and exit.
Napi::Value LandlockExec(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw Napi::TypeError::New(env, "landlockExec(spec) needs a spec");
  ExecSpec s = ParseSpec(info[0].As<Napi::Object>());
  if (s.hasNamespaces) {
    // unshare(CLONE_NEWUSER) fails in a multi-threaded process: namespaces need landlockSpawn.
    throw FailureError(env, EINVAL, "unshare", "", false);
  }
  Failure f;
  ConfineAndExec(s, &f, true);
  throw FailureError(env, f.err, f.syscall, f.path, f.confined);
}

void WriteFailure(int fd, int err, const char* syscall, const char* path, bool confined) {
  WireFailure w;
  memset(&w, 0, sizeof w);
  w.err = err;
  w.confined = confined ? 1 : 0;
  strncpy(w.syscall, syscall, sizeof w.syscall - 1);
  strncpy(w.path, path, sizeof w.path - 1);
  ssize_t n;
  do {
    n = write(fd, &w, sizeof w);
  } while (n < 0 && errno == EINTR);
}

// landlockSpawn(spec) -> pid.
// pipe2(O_CLOEXEC) -> block signals -> fork -> child: default signals, PR_SET_PDEATHSIG,
// EnterNamespaces (may fork again), chdir, Landlock, seccomp, seal fds, execve. The parent reads
// the pipe: EOF means execve succeeded (the write end closed on exec); a record is the child's
// {errno, syscall, path}, thrown after reaping the child. The child stays in confine's process
// group, which the terminal keeps in the foreground, so job control and Ctrl-C reach it as they
// would reach confine.
Napi::Value LandlockSpawn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw Napi::TypeError::New(env, "landlockSpawn(spec) needs a spec");
  ExecSpec s = ParseSpec(info[0].As<Napi::Object>());
  ErrnoFailure nsFailure;  // built here so the child has nothing to construct

  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) throw ErrnoError(env, errno, "pipe2");
  UniqueFd readEnd(p[0]);
  UniqueFd writeEnd(p[1]);

  // With every signal blocked across fork(), no Node handler can run in the child before it
  // resets them (libuv's handler would write into the parent's signal pipe).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    ResetSignals();
    Failure f;
    // If confine is killed outright, its command goes with it, as it would had confine become
    // the command.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
      WriteFailure(writeEnd.get(), errno, "prctl", "", false);
      _exit(127);
    }
    if (getppid() != parent) _exit(127);
    if (s.hasNamespaces && !EnterNamespaces(s.namespaces, &nsFailure)) {
      WriteFailure(writeEnd.get(), nsFailure.err, nsFailure.syscall.c_str(), nsFailure.path.c_str(), false);
      _exit(127);
    }
    ConfineAndExec(s, &f, false);
    WriteFailure(writeEnd.get(), f.err, f.syscall, f.path, f.confined);
    _exit(127);
  }
  int forkErr = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) throw ErrnoError(env, forkErr, "fork");
  writeEnd.reset();

  WireFailure w;
  size_t got = ReadWire(readEnd.get(), &w);
  if (got == 0) return Napi::Number::New(env, pid);

  int status;
  WaitChild(pid, &status);
  if (got < sizeof w) throw FailureError(env, EIO, "read", "", false);
  w.syscall[sizeof w.syscall - 1] = '\0';
  w.path[sizeof w.path - 1] = '\0';
  throw FailureError(env, w.err, w.syscall, w.path, w.confined != 0);
}

}  // namespace

void RegisterLandlock(Napi::Env env, Napi::Object exports) {
  exports.Set("landlockAbi", Napi::Function::New(env, LandlockAbi, "landlockAbi"));
  exports.Set("landlockExec", Napi::Function::New(env, LandlockExec, "landlockExec"));
  exports.Set("landlockSpawn", Napi::Function::New(env, LandlockSpawn, "landlockSpawn"));
}

}  // namespace arb
