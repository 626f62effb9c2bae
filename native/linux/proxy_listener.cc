// The listening socket of confine's proxy, made inside the command's network namespace: that
// namespace has only loopback, so the one way out is this socket, which confine, outside,
// accepts on (src/confine/net/step.ts). Nothing else of the proxy is native.
//
// Two ways in: the namespaces jail makes it in its own child, right after the network namespace
// (SendLoopbackListener, from EnterNamespaces); for a jail another program makes (bwrap), a
// short-lived child of confine joins that program's network namespace and makes it there
// (loopbackListenerIn). Either way confine receives the descriptor over a unix socket and the
// command never holds it (it cannot accept on it, nor close it to listen on the port itself).
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/errno_error.h"
#include "common/unique_fd.h"
#include "linux/layers.h"
#include "linux/modules.h"

namespace arb {
namespace {

// A step that failed: its errno and the system call's name (a static string: nothing here
// allocates, since it runs after fork()).
struct Step {
  int err = 0;
  const char* syscall = "";
  bool Fail(const char* name) {
    err = errno;
    syscall = name;
    return false;
  }
};

// socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC) -> bind(127.0.0.1:port) -> listen. -1 on failure.
int ListenLoopback(uint16_t port, Step* step) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return step->Fail("socket"), -1;
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0) {
    step->Fail("bind");
    close(fd);
    return -1;
  }
  if (listen(fd, 128) != 0) {
    step->Fail("listen");
    close(fd);
    return -1;
  }
  return fd;
}

// sendmsg(sock, one byte + SCM_RIGHTS{fd}).
bool SendFd(int sock, int fd, Step* step) {
  char byte = 'L';
  struct iovec iov;
  iov.iov_base = &byte;
  iov.iov_len = 1;
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
  ssize_t n;
  do {
    n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != 1) {
    if (n >= 0) errno = EIO;
    return step->Fail("sendmsg");
  }
  return true;
}

// What the child of loopbackListenerIn sends when it fails (as data, with no descriptor).
struct WireStep {
  int32_t err;
  char syscall[20];
};

// In the child: open(/proc/PID/ns/net) -> ioctl(NS_GET_USERNS): the user namespace that owns it
// (bwrap may run the command in a user namespace nested in that one, where joining would not
// give the right to join the network namespace) -> setns(user) -> setns(net) -> listen -> send.
// A process may join a user namespace its own user made, from the namespace above it; setns of
// a user namespace needs a single-threaded process, which the child of fork() is.
[[noreturn]] void ListenerChild(pid_t pid, uint16_t port, int sock) {
  Step step;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/ns/net", static_cast<int>(pid));
  int net = open(path, O_RDONLY | O_CLOEXEC);
  bool ok = net >= 0 || step.Fail("open");
  int user = ok ? ioctl(net, NS_GET_USERNS) : -1;
  ok = ok && (user >= 0 || step.Fail("ioctl"));
  ok = ok && (setns(user, CLONE_NEWUSER) == 0 || step.Fail("setns"));
  ok = ok && (setns(net, CLONE_NEWNET) == 0 || step.Fail("setns"));
  int fd = ok ? ListenLoopback(port, &step) : -1;
  if (fd >= 0 && SendFd(sock, fd, &step)) _exit(0);
  WireStep w;
  memset(&w, 0, sizeof w);
  w.err = step.err;
  strncpy(w.syscall, step.syscall, sizeof w.syscall - 1);
  ssize_t ignored = write(sock, &w, sizeof w);
  (void)ignored;
  _exit(1);
}

// loopbackListenerIn(pid, port) -> fd
//   socketpair -> fork -> child: ListenerChild -> parent: recvmsg (the descriptor, or the
//   child's failure) -> waitpid.
// The descriptor is close-on-exec, a listener on 127.0.0.1:port in the network namespace of
// process `pid`. Errors carry errno and the system call that failed.
Napi::Value LoopbackListenerIn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
    throw Napi::TypeError::New(env, "loopbackListenerIn(pid: number, port: number)");
  }
  int32_t pidArg = info[0].As<Napi::Number>().Int32Value();
  uint32_t portArg = info[1].As<Napi::Number>().Uint32Value();
  if (pidArg <= 0 || portArg == 0 || portArg > 65535) throw Napi::RangeError::New(env, "loopbackListenerIn: a pid and a port");
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) throw ErrnoError(env, errno, "socketpair");
  UniqueFd mine(sv[0]);
  UniqueFd theirs(sv[1]);

  // Every signal blocked across fork(), so that no Node handler runs in the child.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t child = fork();
  if (child == 0) ListenerChild(static_cast<pid_t>(pidArg), static_cast<uint16_t>(portArg), theirs.get());
  int forkErr = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (child < 0) throw ErrnoError(env, forkErr, "fork");
  theirs.reset();

  WireStep w;
  memset(&w, 0, sizeof w);
  struct iovec iov;
  iov.iov_base = &w;
  iov.iov_len = sizeof w;
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  ssize_t n;
  do {
    n = recvmsg(mine.get(), &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  int recvErr = errno;
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  int fd = -1;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); n > 0 && c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int))) {
      memcpy(&fd, CMSG_DATA(c), sizeof fd);
    }
  }
  if (fd >= 0) return Napi::Number::New(env, fd);
  if (n < 0) throw ErrnoError(env, recvErr, "recvmsg");
  if (static_cast<size_t>(n) < sizeof w) throw ErrnoError(env, EIO, "fork");
  w.syscall[sizeof w.syscall - 1] = '\0';
  throw ErrnoError(env, w.err, w.syscall, std::string("/proc/") + std::to_string(pidArg) + "/ns/net");
}

}  // namespace

bool SendLoopbackListener(uint16_t port, int sock, ErrnoFailure* failure) {
  Step step;
  UniqueFd fd(ListenLoopback(port, &step));
  if (!fd.valid() || !SendFd(sock, fd.get(), &step)) {
    failure->err = step.err;
    failure->syscall = step.syscall;
    return false;
  }
  return true;
}

void RegisterProxyListener(Napi::Env env, Napi::Object exports) {
  exports.Set("loopbackListenerIn", Napi::Function::New(env, LoopbackListenerIn, "loopbackListenerIn"));
}

}  // namespace arb
