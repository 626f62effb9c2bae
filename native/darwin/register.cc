#include "common/register.h"

namespace arb {
void RegisterPlatform(Napi::Env env, Napi::Object exports) {
  exports.Set("platform", Napi::String::New(env, "darwin"));
}
}  // namespace arb
