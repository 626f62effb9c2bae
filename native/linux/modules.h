#pragma once
#include <napi.h>

// Each Linux module adds its functions to the addon's exports.
namespace arb {
void RegisterCloneTree(Napi::Env env, Napi::Object exports);  // clone_tree.cc
void RegisterLandlock(Napi::Env env, Napi::Object exports);   // landlock_exec.cc
void RegisterProcess(Napi::Env env, Napi::Object exports);    // process.cc
}  // namespace arb
