#pragma once
#include <string>

namespace arb {

// A failed system call, as facts: errno, the call and the path. The addon turns these into an
// error object (errno_error.h) and TypeScript (src/native.ts) into a Node-style error with
// `code`; the launcher reports them to confine on its report descriptor. Neither builds a
// message from strerror.
struct ErrnoFailure {
  int err = 0;
  std::string syscall;
  std::string path;
};

}  // namespace arb
