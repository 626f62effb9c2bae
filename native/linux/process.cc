// Waiting for a process confine started, off the main thread, and asking the terminal who is in
// the foreground. libuv reaps only the processes it spawned (waitpid by pid), so a child made by
// landlockSpawn is ours to reap.
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/errno_error.h"
#include "common/unique_fd.h"
#include "linux/modules.h"

namespace arb {
namespace {

// waitPid(pid) -> Promise<{status, signal}>: waitpid(pid, 0) in a worker thread, retried on
// EINTR. Stops are not reported (no WUNTRACED): a stopped command stops confine with it, as the
// terminal sends SIGTSTP to the whole foreground process group.
class WaitWorker : public Napi::AsyncWorker {
 public:
  WaitWorker(Napi::Env env, pid_t pid)
      : Napi::AsyncWorker(env, "arb.waitPid"), pid_(pid), deferred_(Napi::Promise::Deferred::New(env)) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    int status = 0;
    pid_t r;
    do {
      r = waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
      err_ = errno;
      return;
    }
    status_ = status;
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (err_ != 0) {
      deferred_.Reject(ErrnoError(env, err_, "waitpid").Value());
      return;
    }
    Napi::Object result = Napi::Object::New(env);
    if (WIFSIGNALED(status_)) {
      result.Set("status", env.Null());
      result.Set("signal", Napi::Number::New(env, WTERMSIG(status_)));
    } else {
      result.Set("status", Napi::Number::New(env, WEXITSTATUS(status_)));
      result.Set("signal", env.Null());
    }
    deferred_.Resolve(result);
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  pid_t pid_;
  int status_ = 0;
  int err_ = 0;
  Napi::Promise::Deferred deferred_;
};

Napi::Value WaitPid(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) throw Napi::TypeError::New(env, "waitPid(pid) needs a pid");
  auto* worker = new WaitWorker(env, info[0].As<Napi::Number>().Int32Value());
  Napi::Promise p = worker->Promise();
  worker->Queue();
  return p;
}

// terminalForeground() -> {pgrp, foreground}: getpgrp(), and tcgetpgrp() of the controlling
// terminal (the first of fds 0-2 that is one, else /dev/tty), or -1 without one. A signal such
// as SIGINT that reaches confine while its group is in the foreground came from the terminal,
// which sent it to the command as well, so confine must not send it a second time.
Napi::Value TerminalForeground(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  pid_t fg = -1;
  for (int fd = 0; fd <= 2 && fg < 0; fd++) {
    if (isatty(fd)) fg = tcgetpgrp(fd);
  }
  if (fg < 0) {
    UniqueFd tty(open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC));
    if (tty.valid()) fg = tcgetpgrp(tty.get());
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("pgrp", Napi::Number::New(env, getpgrp()));
  result.Set("foreground", Napi::Number::New(env, fg));
  return result;
}

}  // namespace

void RegisterProcess(Napi::Env env, Napi::Object exports) {
  exports.Set("waitPid", Napi::Function::New(env, WaitPid, "waitPid"));
  exports.Set("terminalForeground", Napi::Function::New(env, TerminalForeground, "terminalForeground"));
}

}  // namespace arb
