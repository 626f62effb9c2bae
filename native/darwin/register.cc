#include "common/register.h"
#include "posix/posix.h"

namespace arb {
void RegisterPlatform(Napi::Env env, Napi::Object exports) {
  exports.Set("platform", Napi::String::New(env, "darwin"));
  RegisterFdPassing(env, exports);
}
}  // namespace arb
