// Passing descriptors over a unix socket (SCM_RIGHTS), which Node cannot do itself: the broker's
// shim, inside the sandbox, hands its standard streams to confine outside, so that the real `gh`
// reads and writes the confined command's own stdin, stdout and stderr.
//
// Only the descriptors travel natively. Everything else on the connection (the request and the
// answer, length-prefixed JSON) goes through Node's own sockets (src/confine/broker/protocol.ts).
// Built on Linux and macOS alike, so nothing here is Linux-only: where Linux has a flag that does
// in one call what macOS needs two for (SOCK_CLOEXEC, MSG_CMSG_CLOEXEC, MSG_NOSIGNAL), the flag is
// used if the headers define it and fcntl() does the rest.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/errno_error.h"
#include "common/unique_fd.h"
#include "posix/posix.h"

namespace arb {
namespace {

// At most this many descriptors in one message: the shim sends three (0, 1, 2). The control
// buffer is sized for this many, so a peer that sends more gets MSG_CTRUNC and is refused.
constexpr int kMaxFds = 8;

bool SetCloexec(int fd) {
  int flags = fcntl(fd, F_GETFD);
  return flags >= 0 && fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

int SendFlags() {
#ifdef MSG_NOSIGNAL
  return MSG_NOSIGNAL;  // a closed peer is EPIPE, not SIGPIPE (Node ignores SIGPIPE anyway)
#else
  return 0;
#endif
}

// unixConnect(path) -> fd
//   socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0); connect(path)
// A blocking socket, so that the shim's sendFds() below is one complete sendmsg(); the shim then
// wraps the descriptor in a net.Socket (which makes it non-blocking) for the rest of the call.
// Paths longer than sun_path are refused with ENAMETOOLONG rather than silently cut.
Napi::Value UnixConnect(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    throw Napi::TypeError::New(env, "unixConnect(path: string)");
  }
  std::string path = info[0].As<Napi::String>().Utf8Value();
  sockaddr_un addr;
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    throw ErrnoError(env, ENAMETOOLONG, "connect", path);
  }
  std::memcpy(addr.sun_path, path.data(), path.size());

#ifdef SOCK_CLOEXEC
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
#else
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM, 0));
#endif
  if (!fd.valid()) throw ErrnoError(env, {errno, "socket", path});
  if (!SetCloexec(fd.get())) throw ErrnoError(env, {errno, "fcntl", path});
  int rc;
  do {
    rc = connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) throw ErrnoError(env, {errno, "connect", path});
  return Napi::Number::New(env, fd.release());
}

// sendFds(fd, byte, fds)
//   sendmsg(fd, one data byte + SCM_RIGHTS{fds})
// The descriptors ride on one byte of data, since a stream socket carries no ancillary data
// without any; the receiver reads exactly that byte, so the descriptors cannot be attached to a
// later read. The caller's descriptors stay open (the kernel duplicates them into the message).
Napi::Value SendFds(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsNumber() || !info[1].IsNumber() || !info[2].IsArray()) {
    throw Napi::TypeError::New(env, "sendFds(fd: number, byte: number, fds: number[])");
  }
  int sock = info[0].As<Napi::Number>().Int32Value();
  unsigned char byte = static_cast<unsigned char>(info[1].As<Napi::Number>().Uint32Value());
  Napi::Array list = info[2].As<Napi::Array>();
  if (list.Length() == 0 || list.Length() > kMaxFds) {
    throw Napi::RangeError::New(env, "sendFds: between 1 and 8 descriptors");
  }
  std::vector<int> fds;
  for (uint32_t i = 0; i < list.Length(); i++) {
    Napi::Value v = list.Get(i);
    if (!v.IsNumber()) throw Napi::TypeError::New(env, "sendFds: descriptors are numbers");
    fds.push_back(v.As<Napi::Number>().Int32Value());
  }

  iovec iov;
  iov.iov_base = &byte;
  iov.iov_len = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()), 0);
  msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());

  ssize_t n;
  do {
    n = sendmsg(sock, &msg, SendFlags());
  } while (n < 0 && errno == EINTR);
  if (n < 0) throw ErrnoError(env, {errno, "sendmsg", ""});
  if (n != 1) throw ErrnoError(env, EIO, "sendmsg");
  return env.Undefined();
}

// recvFds(fd, maxFds) -> {byte, fds} | {byte: -1, fds: []} at end of stream | null (EAGAIN)
//   recvmsg(fd, 1 byte, control for maxFds descriptors, MSG_DONTWAIT|MSG_CMSG_CLOEXEC)
// Non-blocking, so it never holds the event loop or a thread: the broker calls it when a
// connection is accepted (the shim has sent by then) and again a little later if it had not.
// Every descriptor received is close-on-exec, so none reaches a program the broker runs unless
// the broker hands it over on purpose. A message with more descriptors than maxFds (MSG_CTRUNC),
// or anything but SCM_RIGHTS, is refused with EMSGSIZE / EPROTO after closing what did arrive.
Napi::Value RecvFds(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
    throw Napi::TypeError::New(env, "recvFds(fd: number, maxFds: number)");
  }
  int sock = info[0].As<Napi::Number>().Int32Value();
  int maxFds = info[1].As<Napi::Number>().Int32Value();
  if (maxFds < 1 || maxFds > kMaxFds) throw Napi::RangeError::New(env, "recvFds: maxFds between 1 and 8");

  unsigned char byte = 0;
  iovec iov;
  iov.iov_base = &byte;
  iov.iov_len = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * maxFds), 0);
  msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();

  int flags = MSG_DONTWAIT;
#ifdef MSG_CMSG_CLOEXEC
  flags |= MSG_CMSG_CLOEXEC;
#endif
  ssize_t n;
  do {
    n = recvmsg(sock, &msg, flags);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return env.Null();
  if (n < 0) throw ErrnoError(env, {errno, "recvmsg", ""});

  // Take ownership of whatever arrived before deciding anything, so that every path out closes it.
  std::vector<UniqueFd> received;
  bool foreign = false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; i++) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        received.emplace_back(fd);
      }
    } else {
      foreign = true;
    }
  }
  for (auto& fd : received) {
    if (!SetCloexec(fd.get())) throw ErrnoError(env, {errno, "fcntl", ""});
  }
  if (msg.msg_flags & MSG_CTRUNC) throw ErrnoError(env, EMSGSIZE, "recvmsg");
  if (foreign) throw ErrnoError(env, EPROTO, "recvmsg");

  Napi::Object result = Napi::Object::New(env);
  result.Set("byte", Napi::Number::New(env, n == 0 ? -1 : byte));
  Napi::Array fds = Napi::Array::New(env, received.size());
  for (size_t i = 0; i < received.size(); i++) fds.Set(i, Napi::Number::New(env, received[i].release()));
  result.Set("fds", fds);
  return result;
}

// socketPair() -> [fd, fd]
//   socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC)
// Both ends close-on-exec: confine keeps one and names the other in a plan, for a child (after
// fork, before exec) to send a descriptor back over it (--allow-host's listener).
Napi::Value SocketPair(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int sv[2];
#ifdef SOCK_CLOEXEC
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) throw ErrnoError(env, errno, "socketpair");
#else
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) throw ErrnoError(env, errno, "socketpair");
#endif
  UniqueFd a(sv[0]);
  UniqueFd b(sv[1]);
  if (!SetCloexec(a.get()) || !SetCloexec(b.get())) throw ErrnoError(env, errno, "fcntl");
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(0u, Napi::Number::New(env, a.release()));
  out.Set(1u, Napi::Number::New(env, b.release()));
  return out;
}

}  // namespace

void RegisterFdPassing(Napi::Env env, Napi::Object exports) {
  exports.Set("unixConnect", Napi::Function::New(env, UnixConnect, "unixConnect"));
  exports.Set("sendFds", Napi::Function::New(env, SendFds, "sendFds"));
  exports.Set("recvFds", Napi::Function::New(env, RecvFds, "recvFds"));
  exports.Set("socketPair", Napi::Function::New(env, SocketPair, "socketPair"));
}

}  // namespace arb
