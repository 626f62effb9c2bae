#pragma once
// The parent's side of a forked child's error pipe (landlock_exec.cc's landlockSpawn,
// namespaces.cc's namespacesProbe): the child writes one fixed-size record of its failure, or
// nothing, and the pipe is O_CLOEXEC, so EOF comes when the child execs or exits.
#include <errno.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>

namespace arb {

// Reads the child's record into *w, as much of it as arrives. Returns the bytes read: 0 for no
// record, fewer than sizeof *w for a torn one (the child died while writing).
template <typename Wire>
size_t ReadWire(int fd, Wire* w) {
  size_t got = 0;
  while (got < sizeof *w) {
    ssize_t n = read(fd, reinterpret_cast<char*>(w) + got, sizeof *w - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

// Reaps the child, through any interruption by a signal.
inline void WaitChild(pid_t pid, int* status) {
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace arb
