#pragma once
#include <napi.h>

// Modules built on both Linux and macOS.
namespace arb {
void RegisterFdPassing(Napi::Env env, Napi::Object exports);  // posix/fd_passing.cc
}  // namespace arb
