// Asking the terminal who is in the foreground, for confine's one rule of passing signals on
// (src/confine/signals.ts).
#include <errno.h>
#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include "common/errno_error.h"
#include "common/unique_fd.h"
#include "linux/modules.h"

namespace arb {
namespace {

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
  exports.Set("terminalForeground", Napi::Function::New(env, TerminalForeground, "terminalForeground"));
}

}  // namespace arb
