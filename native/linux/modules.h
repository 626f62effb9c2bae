#pragma once
#include <napi.h>

// Each module adds its functions to the addon's exports.
namespace arb {
void RegisterCloneTree(Napi::Env env, Napi::Object exports);   // linux/clone_tree.cc
void RegisterLaunch(Napi::Env env, Napi::Object exports);      // linux/launch.cc
void RegisterProcess(Napi::Env env, Napi::Object exports);     // linux/process.cc
void RegisterListDir(Napi::Env env, Napi::Object exports);     // linux/list_dir.cc
void RegisterProcPlaces(Napi::Env env, Napi::Object exports);  // linux/proc_places.cc

}  // namespace arb
