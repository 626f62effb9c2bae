#pragma once
// The macOS clone engine behind cloneTree (darwin/clone_tree.cc holds its JavaScript side).
// Kept free of Node-API so that its walk can be compiled and run on Linux against a stand-in
// clonefile (test/native/darwin/), which is as close to a test as the engine gets without a Mac.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace arb {

// A failed system call, as facts; clone_tree.cc hands it to JavaScript as an ErrnoFailure
// (common/errno_error.h, which this header does not include: it brings in Node-API).
struct DarwinCloneFailure {
  int err = 0;
  std::string syscall;
  std::string path;
};

struct DarwinCloneOptions {
  std::string source;  // an existing directory; links are followed to reach it, never below it
  std::string base;    // an existing empty directory (reserved by the caller)
  std::string fork;    // an existing empty directory, or "" for none
  // Paths relative to source (raw bytes; a trailing '/' or a leading './' is allowed), left out
  // with everything under them.
  std::vector<std::string> skip;
  unsigned threads = 0;             // 0: the number of cores, at most 8
  const int32_t* cancel = nullptr;  // non-zero asks every thread to stop (ECANCELED)
};

struct DarwinLeftOut {
  std::string path;  // relative to the source, raw bytes
  const char* kind;  // "socket" or "device"
};

struct DarwinCloneTotals {
  // Counted for what the walk looked at one by one, in the base (the fork has the same). The
  // contents of a directory cloned whole are not looked at, so not counted: see cloned_whole.
  uint64_t files = 0, directories = 0, symlinks = 0, fifos = 0, bytes = 0;
  // Entries cloned with clonefile, and regular files copied in full, in base and fork.
  uint64_t reflinked = 0, copied = 0;
  // Directories cloned whole, each with one clonefile, in base and fork.
  uint64_t cloned_whole = 0;
  std::vector<DarwinLeftOut> left_out;
};

// Runs the whole clone (source -> base, then base -> fork) on the calling thread and a small
// pool; calls progress(files, bytes) from the calling thread at most four times a second.
// Returns false with *failure set (errno, syscall, path) on the first failure; the caller
// removes the half-made base and fork.
bool DarwinCloneTree(const DarwinCloneOptions& options,
                     const std::function<void(uint64_t files, uint64_t bytes)>& progress,
                     DarwinCloneTotals* totals, DarwinCloneFailure* failure);

}  // namespace arb
