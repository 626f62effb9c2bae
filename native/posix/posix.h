#pragma once
#include <napi.h>

// Modules built on both Linux and macOS.
namespace arb {
void RegisterFdPassing(Napi::Env env, Napi::Object exports);  // posix/fd_passing.cc
void RegisterRemoveTree(Napi::Env env, Napi::Object exports);  // posix/remove_tree.cc
}  // namespace arb
