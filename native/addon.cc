// The addon's entry point: it registers the platform's functions, nothing else.
#include <napi.h>

#include "common/register.h"

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  arb::RegisterPlatform(env, exports);
  return exports;
}

NODE_API_MODULE(arb, Init)
