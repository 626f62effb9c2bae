// inSandbox(): whether this process already runs inside a Seatbelt sandbox. confine asks before
// it starts sandbox-exec, because a sandboxed process cannot apply another profile:
// sandbox-exec would fail with a bare "sandbox_apply: Operation not permitted", and confine
// says instead why and what to do (run it from outside).
//
//   sandbox_check(getpid(), NULL, SANDBOX_FILTER_NONE)
//
// With no operation, sandbox_check answers whether the process has a sandbox at all: 1 if it
// has, 0 if not, -1 with errno on failure (e.g. ESRCH, not expected for our own pid). It lives
// in libsystem_sandbox (part of libSystem, so nothing more to link) but is declared only in a
// private header; it is declared here as Chromium, WebKit and others do. <sandbox.h> is not
// included, so that a future SDK declaring it with its enum type cannot clash.
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>

#include "common/errno_error.h"
#include "darwin/modules.h"

extern "C" int sandbox_check(pid_t pid, const char* operation, int type, ...);

namespace arb {
namespace {

constexpr int kSandboxFilterNone = 0;  // SANDBOX_FILTER_NONE, the first of enum sandbox_filter_type

Napi::Value InSandbox(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  errno = 0;
  int r = sandbox_check(getpid(), nullptr, kSandboxFilterNone);
  if (r < 0) {
    int err = errno != 0 ? errno : EINVAL;
    throw ErrnoError(env, err, "sandbox_check");
  }
  return Napi::Boolean::New(env, r > 0);
}

}  // namespace

void RegisterSandboxCheck(Napi::Env env, Napi::Object exports) {
  exports.Set("inSandbox", Napi::Function::New(env, InSandbox, "inSandbox"));
}

}  // namespace arb
