// --allow-host: the listening socket of confine's proxy, made inside the command's network
// namespace (the launcher's own, or bubblewrap's when the launcher runs inside bwrap). That
// namespace has only loopback, so the one way out is this socket, on which confine, outside,
// accepts and serves its proxy (src/confine/net/step.ts). The launcher makes it after the
// namespaces and before Landlock, sends it to confine over the report socket, closes its own
// copy and only then execs the command: the command never holds it, so it can neither accept on
// it nor close it to listen on the port itself.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "common/unique_fd.h"
#include "launcher/layers.h"

namespace arb {
namespace {

bool Fail(ErrnoFailure* f, const char* syscall) {
  f->err = errno;
  f->syscall = syscall;
  f->path = "127.0.0.1";
  return false;
}

}  // namespace

// socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC) -> bind(127.0.0.1:port) -> listen ->
// sendmsg(report, the byte 'L' + SCM_RIGHTS{fd}) -> close.
// One data byte carries the descriptor, since a stream socket carries no ancillary data without
// data; confine reads exactly that byte with recvmsg (src/confine/launch.ts), the rest of the
// report (a failure record, or EOF at exec) as before.
bool SendLoopbackListener(uint16_t port, int report, ErrnoFailure* failure) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Fail(failure, "socket");
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0) return Fail(failure, "bind");
  if (listen(fd.get(), 128) != 0) return Fail(failure, "listen");

  char byte = kListenerRecord;
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
  int raw = fd.get();
  memcpy(CMSG_DATA(cmsg), &raw, sizeof raw);
  ssize_t n;
  do {
    n = sendmsg(report, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != 1) {
    if (n >= 0) errno = EIO;
    return Fail(failure, "sendmsg");
  }
  return true;
}

}  // namespace arb
