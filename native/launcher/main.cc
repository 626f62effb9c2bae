// arb-launcher: the small single-threaded program that applies confine's sandbox and becomes
// the command. Confine (Node) either execve's it (confine becomes the command) or spawns it and
// waits; either way no sandbox code runs in Node or in a fork() of Node, which is
// multi-threaded (unshare(CLONE_NEWUSER) refuses a multi-threaded process, and a Landlock domain
// binds one thread). Codex re-executes its codex-linux-sandbox helper for the same reason.
//
//   arb-launcher --plan-fd N [--report-fd M]
//
// reset signals -> read the plan from N (plan.cc), close N -> [die with confine] -> close every
// descriptor but 0-2, the kept ones and M -> namespaces and mounts (namespaces.cc; with a
// fallback, made in a child, the launcher waiting outside: where they do not work at all,
// Landlock alone as the fallback says, said on stderr) -> [--allow-host: the proxy's listener on
// 127.0.0.1:PORT in the network namespace, sent to confine on M (proxy_listener.cc)] -> [without
// a PID namespace, when confine waits: fork, this process the subreaper that ends what the
// command leaves running] -> chdir (or fchdir to the plan's cwd-fd, then closed) ->
// Landlock (landlock.cc) -> seccomp (seccomp.cc) -> 0-2 and kept descriptors inheritable and
// blocking -> execve (and /bin/sh FILE for a file without #!, as execvp does).
//
// Failure: with --report-fd, one record on M (confine, waiting, reads it: EOF without a record
// means the command was exec'd, since M is close-on-exec); without, the plan's on-failure text on
// stderr (confine became the launcher, so no one else is there to say it). M is a unix socket
// (libuv makes stdio pipes as socketpairs; with --allow-host confine passes one end of a
// socketpair of its own), so it also carries a descriptor back: with a proxy-listen record, one
// byte 'L' with SCM_RIGHTS, the proxy's listener, before anything else on M.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "launcher/layers.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace arb {
namespace {

// Node ignores SIGPIPE, libuv installs handlers and masks; ignored signals and the mask survive
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
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

bool Fail(ErrnoFailure* f, int err, const char* syscall, const char* path = "") {
  f->err = err;
  f->syscall = syscall;
  f->path = path;
  return false;
}

bool ReadAll(int fd, std::string* out, ErrnoFailure* f) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      int err = errno;
      if (err == EINTR) continue;
      return Fail(f, err, "read", "the plan");
    }
    if (n == 0) return true;
    out->append(buf, static_cast<size_t>(n));
  }
}

bool WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Closes every descriptor above 2 but `keep` (sorted) and `report`: what confine's caller left
// open (a pipe, a directory) must not reach the command.
bool CloseOthers(const std::vector<int>& keep, int report, ErrnoFailure* f) {
  std::vector<int> kept(keep);
  if (report > 2) kept.push_back(report);
  std::sort(kept.begin(), kept.end());
  unsigned int from = 3;
  for (int k : kept) {
    if (static_cast<unsigned int>(k) > from && syscall(SYS_close_range, from, static_cast<unsigned int>(k) - 1, 0U) != 0) {
      return Fail(f, errno, "close_range");
    }
    from = static_cast<unsigned int>(k) + 1;
  }
  if (syscall(SYS_close_range, from, ~0U, 0U) != 0) return Fail(f, errno, "close_range");
  return true;
}

// The command gets 0, 1, 2 and the kept descriptors open across execve and blocking: Node
// marks the standard streams close-on-exec at start-up (uv_disable_stdio_inheritance) and libuv
// may have left them non-blocking (the flag belongs to the open file, shared with confine).
bool Inheritable(const std::vector<int>& keep, ErrnoFailure* f) {
  for (int fd = 0; fd <= 2; fd++) {
    int fdFlags = fcntl(fd, F_GETFD);
    if (fdFlags >= 0 && (fdFlags & FD_CLOEXEC)) fcntl(fd, F_SETFD, fdFlags & ~FD_CLOEXEC);
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK)) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  }
  for (int fd : keep) {
    int flags = fcntl(fd, F_GETFD);
    if (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) != 0) return Fail(f, errno, "fcntl");
  }
  return true;
}

std::string ErrnoName(int err) {
  const char* name = strerrorname_np(err);
  return name ? name : "E" + std::to_string(err);
}

void Replace(std::string* s, const std::string& from, const std::string& to) {
  for (size_t at = s->find(from); at != std::string::npos; at = s->find(from, at + to.size())) s->replace(at, from.size(), to);
}

// Reports a failure and ends the launcher (or, under a PID namespace, whichever of its
// processes failed; the ones above exit with its status).
[[noreturn]] void Report(const LaunchPlan& plan, int reportFd, const ErrnoFailure& f, bool confined) {
  std::string name = ErrnoName(f.err);
  if (reportFd >= 0) {
    std::string record = "failure";
    record += '\0';
    record += f.syscall + '\0' + std::to_string(f.err) + '\0' + f.path + '\0' + (confined ? "1" : "0") + '\0';
    WriteAll(reportFd, record);
    _exit(127);
  }
  for (const FailureMessage& m : plan.messages) {
    if ((m.syscall != "*" && m.syscall != f.syscall) || (m.errnoName != "*" && m.errnoName != name)) continue;
    std::string text = m.text;
    Replace(&text, "{syscall}", f.syscall);
    Replace(&text, "{errno}", name);
    Replace(&text, "{path}", f.path);
    WriteAll(2, text + "\n");
    _exit(m.exitCode);
  }
  WriteAll(2, "arb-launcher: " + f.syscall + (f.path.empty() ? "" : " '" + f.path + "'") + " failed: " + name + "\n");
  _exit(f.syscall == "execve" ? 126 : 1);
}

[[noreturn]] void Usage(const char* why) {
  std::string s = std::string("arb-launcher: ") + why + "\narb-launcher is run by arb confine: arb-launcher --plan-fd N [--report-fd M]\n";
  WriteAll(2, s);
  _exit(2);
}

bool FdArgument(const char* s, int* out) {
  char* end = nullptr;
  errno = 0;
  long n = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || n < 0 || n > 1 << 20) return false;
  *out = static_cast<int>(n);
  return true;
}

int Main(int argc, char** argv) {
  ResetSignals();
  int planFd = -1;
  int reportFd = -1;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--plan-fd" && i + 1 < argc && FdArgument(argv[i + 1], &planFd)) i++;
    else if (a == "--report-fd" && i + 1 < argc && FdArgument(argv[i + 1], &reportFd)) i++;
    else Usage("unknown or incomplete argument");
  }
  if (planFd < 0) Usage("no --plan-fd");

  LaunchPlan plan;
  ErrnoFailure failure;
  std::string bytes;
  if (!ReadAll(planFd, &bytes, &failure)) Report(plan, reportFd, failure, false);
  close(planFd);
  std::string error;
  if (!ParsePlan(bytes, &plan, &error)) Usage(error.c_str());
  if (reportFd >= 0) fcntl(reportFd, F_SETFD, FD_CLOEXEC);

  if (plan.parent != 0) {
    // If confine is killed outright, its command goes with it, as it would had confine become
    // the command. Confine already gone: run nothing.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) Report(plan, reportFd, {errno, "prctl", ""}, false);
    if (getppid() != plan.parent) _exit(1);
  }
  std::vector<int> left(plan.keepFds);
  if (plan.cwdFd >= 0) left.push_back(plan.cwdFd);
  if (!CloseOthers(left, reportFd, &failure)) Report(plan, reportFd, failure, false);
  bool entered = !plan.namespaces.enabled;
  if (plan.namespaces.enabled && plan.fallback.present) {
    ErrnoFailure why;
    switch (EnterNamespacesOrSayWhy(plan.namespaces, &why)) {
      case Entered::kYes:
        entered = true;
        break;
      case Entered::kFailed:
        Report(plan, reportFd, why, false);
      case Entered::kUnsupported: {
        // Landlock alone, as confine planned it for this case, said on stderr.
        std::string text = plan.fallback.text;
        if (why.path.empty()) Replace(&text, " {path}", "");
        Replace(&text, "{syscall}", why.syscall);
        Replace(&text, "{errno}", ErrnoName(why.err));
        Replace(&text, "{path}", why.path);
        WriteAll(2, text + "\n");
        // The proxy's listener needs the network namespace: never made on the host's loopback
        // (confine probes first with --allow-host, so its plans carry no fallback).
        if (plan.fallback.refuse || plan.proxyListen != 0) _exit(1);
        plan.namespaces.enabled = false;
        plan.landlock.handledNet = plan.fallback.handledNet;
        plan.seccomp.denyNetwork = plan.fallback.denyNetwork;
        entered = true;
        break;
      }
    }
  }
  if (!entered && !EnterNamespaces(plan.namespaces, &failure)) Report(plan, reportFd, failure, false);
  if (plan.probe) _exit(0);
  if (plan.proxyListen != 0) {
    // In the network namespace (the launcher's, or bwrap's around it), loopback up: the proxy's
    // only way in, handed to confine before anything of the command runs.
    if (reportFd < 0) Usage("proxy-listen needs --report-fd");
    if (!SendLoopbackListener(plan.proxyListen, reportFd, &failure)) Report(plan, reportFd, failure, false);
  }
  if (plan.reap && !(plan.namespaces.enabled && plan.namespaces.pid)) {
    // No PID namespace ends what the command leaves running: this process stays as its parent.
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) Report(plan, reportFd, {errno, "prctl", ""}, false);
    sigset_t all, mask;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &mask);
    pid_t command = fork();
    if (command < 0) {
      int err = errno;
      sigprocmask(SIG_SETMASK, &mask, nullptr);
      Report(plan, reportFd, {err, "fork", ""}, false);
    }
    if (command > 0) SubreapAndExit(command, &mask);
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) Report(plan, reportFd, {errno, "prctl", ""}, false);
  }

  if (plan.cwdFd >= 0) {
    // The directory confine opened and checked, not whatever its name leads to by now.
    if (fchdir(plan.cwdFd) != 0) Report(plan, reportFd, {errno, "fchdir", plan.cwd}, false);
    if (!std::binary_search(plan.keepFds.begin(), plan.keepFds.end(), plan.cwdFd)) close(plan.cwdFd);
  } else if (chdir(plan.cwd.c_str()) != 0) {
    Report(plan, reportFd, {errno, "chdir", plan.cwd}, false);
  }
  bool confined = false;
  if (plan.landlock.enabled) {
    if (!RestrictSelf(plan.landlock, &failure)) Report(plan, reportFd, failure, false);
    confined = true;
  }
  if (!ApplySeccomp(plan.seccomp, &failure)) {
    failure.syscall = "seccomp";
    Report(plan, reportFd, failure, confined);
  }
  if (!Inheritable(plan.keepFds, &failure)) Report(plan, reportFd, failure, confined);

  std::vector<char*> args;
  for (auto& a : plan.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env;
  for (auto& e : plan.env) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  execve(plan.file.c_str(), args.data(), env.data());
  int err = errno;
  if (err == ENOEXEC) {
    // A script without #!: /bin/sh runs it, as execvp does.
    std::vector<char*> sh;
    static char kSh[] = "/bin/sh";
    sh.push_back(kSh);
    sh.push_back(const_cast<char*>(plan.file.c_str()));
    for (size_t i = 1; i < plan.argv.size(); i++) sh.push_back(const_cast<char*>(plan.argv[i].c_str()));
    sh.push_back(nullptr);
    execve(kSh, sh.data(), env.data());
    err = errno;
  }
  Report(plan, reportFd, {err, "execve", plan.file}, confined);
}

}  // namespace
}  // namespace arb

int main(int argc, char** argv) { return arb::Main(argc, argv); }
