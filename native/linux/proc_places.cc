// Where running processes are, for arb diff's warning that a process still works in the fork and
// for --prune, which keeps such a fork (src/tree/processes.ts decides what is inside what).
//
// Why native: it is a readlink per open file of every process, and most processes (kernel
// threads, another user's) answer each with an error. Done with fs calls, each failed readlink
// became a JavaScript exception: 77 processes took 13 to 17 ms of every arb diff on a 2-core VM,
// more than listing a tree of 4,000 files; a desktop runs hundreds, with thousands of files open.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/errno_error.h"
#include "common/unique_fd.h"
#include "linux/dirent64.h"
#include "linux/modules.h"

namespace arb {
namespace {

// getdents64's buffer: /proc of a few hundred processes in a few calls.
constexpr size_t kDentsBuffer = 32 * 1024;
// The longest link target read; a longer one is left out (no path is longer than PATH_MAX).
constexpr size_t kLinkMax = 4096;

bool AllDigits(const char* s) {
  if (*s == '\0') return false;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return false;
  }
  return true;
}

// The names in directory `fd` that are numbers (pids in /proc, descriptors in /proc/PID/fd).
// A directory that fails to list gives what was read until then.
std::vector<std::string> NumberedEntries(int fd, std::vector<char>& buf) {
  std::vector<std::string> out;
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buf.data(), buf.size());
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      const Dirent64* e = reinterpret_cast<const Dirent64*>(buf.data() + at);
      at += e->d_reclen;
      if (AllDigits(e->d_name)) out.emplace_back(e->d_name);
    }
  }
  return out;
}

// Appends the target of link `name` in `dirFd`, ended by a NUL, with its pid; skips a link that
// cannot be read (gone, not ours to see, a kernel thread's cwd).
void AddPlace(int dirFd, const std::string& name, int32_t pid, char* link, std::string& places, std::vector<int32_t>& pids) {
  ssize_t n = readlinkat(dirFd, name.c_str(), link, kLinkMax);
  if (n < 0 || static_cast<size_t>(n) >= kLinkMax) return;
  places.append(link, static_cast<size_t>(n));
  places.push_back('\0');
  pids.push_back(pid);
}

// processPlaces() -> {pids: Int32Array, places: Buffer (each place's bytes ended by a NUL)}
//   open("/proc", O_DIRECTORY); getdents64 for the pids; per pid: readlinkat "PID/cwd" and
//   "PID/root", openat "PID/fd" (O_DIRECTORY) and readlinkat each descriptor there.
// Place i belongs to pids[i]. What /proc does not let this user see is left out, as ps does.
// Throws {errno, syscall, path} only if /proc itself cannot be opened.
Napi::Value ProcessPlaces(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  UniqueFd proc(open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!proc.valid()) throw ErrnoError(env, {errno, "open", "/proc"});
  std::vector<char> buf(kDentsBuffer);
  std::vector<char> link(kLinkMax);
  std::string places;
  std::vector<int32_t> pids;
  for (const std::string& name : NumberedEntries(proc.get(), buf)) {
    int32_t pid = static_cast<int32_t>(strtol(name.c_str(), nullptr, 10));
    AddPlace(proc.get(), name + "/cwd", pid, link.data(), places, pids);
    AddPlace(proc.get(), name + "/root", pid, link.data(), places, pids);
    UniqueFd fds(openat(proc.get(), (name + "/fd").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fds.valid()) continue;
    for (const std::string& fd : NumberedEntries(fds.get(), buf)) AddPlace(fds.get(), fd, pid, link.data(), places, pids);
  }
  Napi::Int32Array pidArray = Napi::Int32Array::New(env, pids.size());
  for (size_t i = 0; i < pids.size(); i++) pidArray[i] = pids[i];
  Napi::Object result = Napi::Object::New(env);
  result.Set("pids", pidArray);
  result.Set("places", Napi::Buffer<char>::Copy(env, places.data(), places.size()));
  return result;
}

}  // namespace

void RegisterProcPlaces(Napi::Env env, Napi::Object exports) {
  exports.Set("processPlaces", Napi::Function::New(env, ProcessPlaces, "processPlaces"));
}

}  // namespace arb
