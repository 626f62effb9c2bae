#pragma once
#include <napi.h>

// Each macOS module adds its functions to the addon's exports (darwin/register.cc calls them).
namespace arb {
void RegisterCloneTree(Napi::Env env, Napi::Object exports);     // darwin/clone_tree.cc
void RegisterSandboxCheck(Napi::Env env, Napi::Object exports);  // darwin/sandbox_check.cc
}  // namespace arb
