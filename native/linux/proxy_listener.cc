// The listening socket of confine's proxy, made inside the command's network namespace: the
// command's namespace has only loopback, so the one way out is this socket, which confine,
// outside, accepts on (src/confine/net/step.ts). Nothing else of the proxy is native.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/unique_fd.h"
#include "linux/layers.h"

namespace arb {

// socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC) -> bind(127.0.0.1:port) -> listen ->
// sendmsg(sock, SCM_RIGHTS) -> close. Runs in the child, in the new network namespace, before
// the PID namespace's forks: the descriptor travels to confine over the socketpair whose other
// end confine keeps, and is closed here, so the command never holds it (it cannot accept on it,
// nor close it to bind its own listener on the port). Allocates nothing: safe after fork().
bool SendLoopbackListener(uint16_t port, int sock, ErrnoFailure* failure) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    failure->err = errno;
    failure->syscall = "socket";
    return false;
  }
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0) {
    failure->err = errno;
    failure->syscall = "bind";
    return false;
  }
  if (listen(fd.get(), 128) != 0) {
    failure->err = errno;
    failure->syscall = "listen";
    return false;
  }
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
  int listener = fd.get();
  memcpy(CMSG_DATA(cmsg), &listener, sizeof listener);
  ssize_t n;
  do {
    n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != 1) {
    failure->err = n < 0 ? errno : EIO;
    failure->syscall = "sendmsg";
    return false;
  }
  return true;
}

}  // namespace arb
