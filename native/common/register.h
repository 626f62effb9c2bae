#pragma once
#include <napi.h>

namespace arb {
// Implemented once per platform (native/linux/register.cc, native/darwin/register.cc);
// CMake picks which one is built.
void RegisterPlatform(Napi::Env env, Napi::Object exports);
}  // namespace arb
