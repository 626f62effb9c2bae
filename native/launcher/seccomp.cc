// The seccomp layer: a classic BPF filter that closes what Landlock does not see.
//
// - TIOCSTI pushes bytes into a terminal's input queue (dev.tty.legacy_tiocsti=1 on many
//   kernels) and TIOCLINUX can paste the console selection: either lets a command type into the
//   user's shell once it exits. Both fail with EPERM; every other ioctl a terminal needs
//   (TIOCGWINSZ, TCSETS, TIOCSPGRP, ...) is untouched.
// - With --no-network and no network namespace: socket() and socketpair() for anything but
//   AF_UNIX fail with EACCES (UDP, raw and ICMP sockets, which Landlock's TCP rules do not
//   cover), and io_uring_setup with ENOSYS (IORING_OP_SOCKET would create a socket without the
//   socket() system call; programs fall back to plain system calls on ENOSYS).
// - With --allow-host and no network namespace, TCP sockets (AF_INET/AF_INET6, SOCK_STREAM,
//   protocol 0 or TCP) are let through too, for Landlock's port rule to confine to the proxy.
//
// System call numbers differ between architectures, so the filter first checks the
// architecture the call was made with: an x86-64 process can still make i386 calls (int 0x80)
// or x32 calls, whose numbers would slip past the checks, and those kill the process.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/errno_failure.h"
#include "launcher/layers.h"

namespace arb {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
constexpr bool kCheckX32 = true;
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
constexpr bool kCheckX32 = false;
#else
#error "arb's seccomp filter knows x86-64 and aarch64 only"
#endif

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

// The low 32 bits of argument i: ioctl's request and socket's domain are C ints or unsigned
// ints, and the kernel ignores the upper half of the register.
constexpr uint32_t ArgLow(int i) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return offsetof(struct seccomp_data, args) + 8 * i;
#else
  return offsetof(struct seccomp_data, args) + 8 * i + 4;
#endif
}

constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
constexpr uint32_t Errno(int err) { return SECCOMP_RET_ERRNO | (static_cast<uint32_t>(err) & SECCOMP_RET_DATA); }

// A small assembler over a fixed array, so the filter is built without allocating. Jumps are resolved by label once all is emitted.
class Program {
 public:
  static constexpr int kMax = 64;
  enum Label { kLabelIoctl, kLabelSocket, kLabelInet, kLabelCount };

  void Load(uint32_t offset) { Emit(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  void Return(uint32_t action) { Emit(BPF_STMT(BPF_RET | BPF_K, action)); }
  // if (A == k) return action;
  void ReturnIfEqual(uint32_t k, uint32_t action) {
    Emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 1));
    Return(action);
  }
  // if (A != k) return action;
  void ReturnIfNotEqual(uint32_t k, uint32_t action) {
    Emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 1, 0));
    Return(action);
  }
  // A &= k;
  void And(uint32_t k) { Emit(BPF_STMT(BPF_ALU | BPF_AND | BPF_K, k)); }
  // if (A >= k) return action;
  void ReturnIfAtLeast(uint32_t k, uint32_t action) {
    Emit(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, k, 0, 1));
    Return(action);
  }
  // if (A == k) goto label;
  void JumpIfEqual(uint32_t k, Label label) {
    pending_[pendingCount_++] = {count_, label};
    Emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 0));
  }
  void Bind(Label label) { labels_[label] = count_; }

  // Resolves the jumps; false if the program outgrew its array or a jump its 8-bit offset.
  bool Finish(struct sock_fprog* out) {
    if (overflow_) return false;
    for (int i = 0; i < pendingCount_; i++) {
      int from = pending_[i].at;
      int to = labels_[pending_[i].label];
      if (to <= from || to - from - 1 > 255) return false;
      code_[from].jt = static_cast<uint8_t>(to - from - 1);
    }
    out->len = static_cast<unsigned short>(count_);
    out->filter = code_;
    return true;
  }

 private:
  void Emit(struct sock_filter insn) {
    if (count_ >= kMax) {
      overflow_ = true;
      return;
    }
    code_[count_++] = insn;
  }
  struct Pending {
    int at;
    Label label;
  };
  struct sock_filter code_[kMax] = {};
  int count_ = 0;
  Pending pending_[8] = {};
  int pendingCount_ = 0;
  int labels_[kLabelCount] = {-1, -1, -1};
  bool overflow_ = false;
};

bool BuildFilter(const SeccompPlan& plan, Program* p, struct sock_fprog* prog) {
  p->Load(offsetof(struct seccomp_data, arch));
  p->ReturnIfNotEqual(kArch, kKill);
  p->Load(offsetof(struct seccomp_data, nr));
  if (kCheckX32) p->ReturnIfAtLeast(__X32_SYSCALL_BIT, kKill);
  if (plan.denyTerminalInjection) p->JumpIfEqual(__NR_ioctl, Program::kLabelIoctl);
  if (plan.denyNetwork) {
    p->JumpIfEqual(__NR_socket, Program::kLabelSocket);
    p->JumpIfEqual(__NR_socketpair, Program::kLabelSocket);
    p->ReturnIfEqual(__NR_io_uring_setup, Errno(ENOSYS));
  }
  p->Return(kAllow);
  if (plan.denyTerminalInjection) {
    p->Bind(Program::kLabelIoctl);
    p->Load(ArgLow(1));
    p->ReturnIfEqual(TIOCSTI, Errno(EPERM));
    p->ReturnIfEqual(TIOCLINUX, Errno(EPERM));
    p->Return(kAllow);
  }
  if (plan.denyNetwork) {
    p->Bind(Program::kLabelSocket);
    p->Load(ArgLow(0));
    p->ReturnIfEqual(AF_UNIX, kAllow);
    if (plan.allowTcp) {
      p->JumpIfEqual(AF_INET, Program::kLabelInet);
      p->JumpIfEqual(AF_INET6, Program::kLabelInet);
    }
    p->Return(Errno(EACCES));
    if (plan.allowTcp) {
      // TCP only: SOCK_STREAM (the flags SOCK_NONBLOCK and SOCK_CLOEXEC masked off) with
      // protocol 0 or IPPROTO_TCP, which Landlock's port rules cover; not SCTP or MPTCP.
      p->Bind(Program::kLabelInet);
      p->Load(ArgLow(1));
      p->And(0xf);
      p->ReturnIfNotEqual(SOCK_STREAM, Errno(EACCES));
      p->Load(ArgLow(2));
      p->ReturnIfEqual(0, kAllow);
      p->ReturnIfEqual(IPPROTO_TCP, kAllow);
      p->Return(Errno(EACCES));
    }
  }
  return p->Finish(prog);
}

}  // namespace

// prctl(PR_SET_NO_NEW_PRIVS) -> seccomp(SECCOMP_SET_MODE_FILTER) (or prctl(PR_SET_SECCOMP) where
// the seccomp system call is missing). NO_NEW_PRIVS is what lets an unprivileged process install
// a filter; Landlock set it already, setting it again is harmless. No TSYNC: the launcher is
// single-threaded.
bool ApplySeccomp(const SeccompPlan& plan, ErrnoFailure* failure) {
  if (!plan.denyTerminalInjection && !plan.denyNetwork) return true;
  Program program;
  struct sock_fprog prog = {};
  if (!BuildFilter(plan, &program, &prog)) {
    failure->err = E2BIG;
    failure->syscall = "seccomp";
    return false;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    failure->err = errno;
    failure->syscall = "prctl";
    return false;
  }
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0) return true;
  if (errno == ENOSYS && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0) return true;
  failure->err = errno;
  failure->syscall = "seccomp";
  return false;
}

}  // namespace arb
