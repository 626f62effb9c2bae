#include "common/register.h"
#include "linux/modules.h"
#include "posix/posix.h"

namespace arb {
void RegisterPlatform(Napi::Env env, Napi::Object exports) {
  exports.Set("platform", Napi::String::New(env, "linux"));
  RegisterCloneTree(env, exports);
  RegisterLandlock(env, exports);
  RegisterProcess(env, exports);
  RegisterNamespaces(env, exports);
  RegisterListDir(env, exports);
  RegisterProxyListener(env, exports);
  RegisterFdPassing(env, exports);
}
}  // namespace arb
