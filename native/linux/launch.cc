// The addon's side of confine on Linux: what Node cannot ask the kernel itself, and nothing that
// applies a sandbox. The sandbox is applied by the launcher (native/launcher/), a program of its
// own that confine execve's or spawns; Node holds no Landlock domain and forks nothing here.
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/seccomp.h>

#include <string>
#include <vector>

#include "common/errno_error.h"
#include "common/unique_fd.h"
#include "linux/modules.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

namespace arb {
namespace {

constexpr uint32_t kCreateRulesetVersion = 1U << 0;

// landlockAbi() -> the ABI version, or -errno (-ENOSYS: no Landlock in this kernel;
// -EOPNOTSUPP: built in but disabled at boot). TypeScript decides what it means.
Napi::Value LandlockAbi(const Napi::CallbackInfo& info) {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  int err = errno;
  return Napi::Number::New(info.Env(), abi < 0 ? -err : static_cast<double>(abi));
}

// seccompAvailable(): seccomp(SECCOMP_GET_ACTION_AVAIL, SECCOMP_RET_ERRNO) succeeds where
// filters returning an errno are supported (Linux 4.14+ with CONFIG_SECCOMP_FILTER). Asks,
// installs nothing.
Napi::Value SeccompAvailable(const Napi::CallbackInfo& info) {
  uint32_t action = SECCOMP_RET_ERRNO;
  return Napi::Boolean::New(info.Env(), syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0);
}

std::vector<std::string> Strings(Napi::Value v, const char* what) {
  Napi::Env env = v.Env();
  if (!v.IsArray()) throw Napi::TypeError::New(env, std::string(what) + " must be an array of strings");
  Napi::Array a = v.As<Napi::Array>();
  std::vector<std::string> out;
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value item = a.Get(i);
    if (!item.IsString()) throw Napi::TypeError::New(env, std::string(what) + " must be an array of strings");
    std::string s = item.As<Napi::String>().Utf8Value();
    if (s.find('\0') != std::string::npos) throw Napi::TypeError::New(env, std::string(what) + " contains a NUL byte");
    out.push_back(std::move(s));
  }
  return out;
}

// memfdWith(data) -> fd: memfd_create(MFD_CLOEXEC), the data written, the offset back at 0. The
// plan handed to the launcher confine execve's (execve below keeps it open across the exec).
Napi::Value MemfdWith(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsBuffer()) throw Napi::TypeError::New(env, "memfdWith(data) needs a Buffer");
  Napi::Buffer<char> data = info[0].As<Napi::Buffer<char>>();
  UniqueFd fd(static_cast<int>(syscall(SYS_memfd_create, "arb-launch-plan", MFD_CLOEXEC)));
  if (!fd.valid()) throw ErrnoError(env, {errno, "memfd_create", ""});
  size_t done = 0;
  while (done < data.Length()) {
    ssize_t n = write(fd.get(), data.Data() + done, data.Length() - done);
    if (n < 0) {
      int err = errno;
      if (err == EINTR) continue;
      throw ErrnoError(env, err, "write");
    }
    done += static_cast<size_t>(n);
  }
  if (lseek(fd.get(), 0, SEEK_SET) != 0) throw ErrnoError(env, {errno, "lseek", ""});
  return Napi::Number::New(env, fd.release());
}

// execve(file, argv, env, inherit): this process becomes `file`. Node opens every descriptor
// close-on-exec, the standard streams included (uv_disable_stdio_inheritance), so 0, 1, 2 and
// `inherit` have the flag cleared first. Returns only by throwing {errno, syscall, path}, with
// the flags as they were.
Napi::Value Execve(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw Napi::TypeError::New(env, "execve(file, argv, env, inherit) needs a file");
  std::string file = info[0].As<Napi::String>().Utf8Value();
  std::vector<std::string> argv = Strings(info[1], "argv");
  std::vector<std::string> envs = Strings(info[2], "env");
  std::vector<int> inherit = {0, 1, 2};
  if (info[3].IsArray()) {
    Napi::Array a = info[3].As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) inherit.push_back(a.Get(i).As<Napi::Number>().Int32Value());
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  std::vector<int> restore;
  for (int fd : inherit) {
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC)) {
      fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
      restore.push_back(fd);
    }
  }
  execve(file.c_str(), args.data(), envp.data());
  int err = errno;
  for (int fd : restore) fcntl(fd, F_SETFD, FD_CLOEXEC);
  throw ErrnoError(env, err, "execve", file);
}

}  // namespace

void RegisterLaunch(Napi::Env env, Napi::Object exports) {
  exports.Set("landlockAbi", Napi::Function::New(env, LandlockAbi, "landlockAbi"));
  exports.Set("seccompAvailable", Napi::Function::New(env, SeccompAvailable, "seccompAvailable"));
  exports.Set("memfdWith", Napi::Function::New(env, MemfdWith, "memfdWith"));
  exports.Set("execve", Napi::Function::New(env, Execve, "execve"));
}

}  // namespace arb
