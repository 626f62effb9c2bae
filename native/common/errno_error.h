#pragma once
#include <napi.h>

#include <cerrno>
#include <string>

namespace arb {

// A failed system call, as facts: errno, the call and the path. TypeScript (src/native.ts)
// turns these into a Node-style error with `code`; C++ never builds a message from strerror.
struct ErrnoFailure {
  int err = 0;
  std::string syscall;
  std::string path;
};

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
