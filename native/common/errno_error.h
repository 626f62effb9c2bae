#pragma once
#include <napi.h>

#include <cerrno>
#include <string>

#include "common/errno_failure.h"

namespace arb {

// Call it as ErrnoError(env, {errno, "open", path}): a braced list is evaluated left to right, so
// errno is read before the strings are made (an allocation may change errno).
inline Napi::Error ErrnoError(Napi::Env env, const ErrnoFailure& f) {
  Napi::Error e = Napi::Error::New(env, f.syscall + " failed");
  e.Set("errno", Napi::Number::New(env, f.err));
  e.Set("syscall", Napi::String::New(env, f.syscall));
  if (!f.path.empty()) e.Set("path", Napi::String::New(env, f.path));
  return e;
}

inline Napi::Error ErrnoError(Napi::Env env, int err, const std::string& syscall,
                              const std::string& path = "") {
  return ErrnoError(env, ErrnoFailure{err, syscall, path});
}

}  // namespace arb
