#pragma once
#include <napi.h>

// Each module adds its functions to the addon's exports.
namespace arb {
void RegisterCloneTree(Napi::Env env, Napi::Object exports);   // linux/clone_tree.cc
void RegisterLandlock(Napi::Env env, Napi::Object exports);    // linux/landlock_exec.cc
void RegisterProcess(Napi::Env env, Napi::Object exports);     // linux/process.cc
void RegisterNamespaces(Napi::Env env, Napi::Object exports);  // linux/namespaces.cc
void RegisterListDir(Napi::Env env, Napi::Object exports);     // linux/list_dir.cc
void RegisterProxyListener(Napi::Env env, Napi::Object exports);  // linux/proxy_listener.cc

}  // namespace arb
