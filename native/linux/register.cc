#include "common/register.h"
#include "linux/modules.h"
#include "posix/posix.h"

namespace arb {
void RegisterPlatform(Napi::Env env, Napi::Object exports) {
  exports.Set("platform", Napi::String::New(env, "linux"));
  RegisterCloneTree(env, exports);
  RegisterLaunch(env, exports);
  RegisterProcess(env, exports);
  RegisterListDir(env, exports);
  RegisterProcPlaces(env, exports);
  RegisterFdPassing(env, exports);
  RegisterRemoveTree(env, exports);
}
}  // namespace arb
