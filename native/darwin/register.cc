#include "common/register.h"
#include "darwin/modules.h"
#include "posix/posix.h"

namespace arb {
void RegisterPlatform(Napi::Env env, Napi::Object exports) {
  exports.Set("platform", Napi::String::New(env, "darwin"));
  RegisterCloneTree(env, exports);
  RegisterSandboxCheck(env, exports);
  RegisterFdPassing(env, exports);
  RegisterRemoveTree(env, exports);
}
}  // namespace arb
