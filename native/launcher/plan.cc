// The plan's wire format, as src/confine/launch.ts writes it: a sequence of NUL-terminated
// strings. The first is the format's name; then records, each a keyword followed by a fixed
// number of fields (lists: a count, then the items). Numbers are decimal. Nothing in a plan
// (paths, arguments, NAME=value) can hold a NUL, so no escaping is needed.
//
//   arb-launch-plan/1
//   cwd PATH                    file PATH
//   argv N ARG…                 env N NAME=VALUE…
//   keep-fd FD                  cwd-fd FD              (fchdir to FD rather than chdir to cwd)
//   landlock HANDLED_FS HANDLED_NET SCOPED RESTRICT_FLAGS
//   rule PATH ACCESS            net-rule PORT ACCESS
//   namespaces PID NET UID GID READ_ONLY_ROOT            (0 or 1 for the flags)
//   mount KIND PATH SOURCE TARGET SIZE MODE               (empty fields, 0 for none)
//   seccomp DENY_TERMINAL_INJECTION DENY_NETWORK ALLOW_TCP
//   proxy-listen PORT           (needs --report-fd: the listener goes back on it)
//   parent PID                  probe                  reap
//   on-failure SYSCALL ERRNO_NAME EXIT_CODE TEXT
//   fallback HANDLED_NET DENY_NETWORK REFUSE TEXT         (where the namespaces do not work)
//   end
#include <limits.h>
#include <stdlib.h>

#include <algorithm>

#include "launcher/layers.h"

namespace arb {
namespace {

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}

  bool Next(std::string* out) {
    if (pos_ >= bytes_.size()) return false;
    size_t end = bytes_.find('\0', pos_);
    if (end == std::string::npos) return false;  // every string is NUL-terminated
    out->assign(bytes_, pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }

  bool Number(uint64_t* out) {
    std::string s;
    if (!Next(&s) || s.empty() || s.size() > 20) return false;
    for (char c : s)
      if (c < '0' || c > '9') return false;
    *out = strtoull(s.c_str(), nullptr, 10);
    return true;
  }

  bool Flag(bool* out) {
    uint64_t n;
    if (!Number(&n) || n > 1) return false;
    *out = n == 1;
    return true;
  }

  bool List(std::vector<std::string>* out) {
    uint64_t n;
    if (!Number(&n) || n > 1000000) return false;
    out->clear();
    for (uint64_t i = 0; i < n; i++) {
      std::string s;
      if (!Next(&s)) return false;
      out->push_back(std::move(s));
    }
    return true;
  }

 private:
  const std::string& bytes_;
  size_t pos_ = 0;
};

bool AbsolutePath(const std::string& p) { return !p.empty() && p[0] == '/' && p.size() < PATH_MAX; }

bool KindOf(const std::string& kind, MountOp::Kind* out) {
  if (kind == "bind-rw") *out = MountOp::kBindReadWrite;
  else if (kind == "bind-ro") *out = MountOp::kBindReadOnly;
  else if (kind == "mask") *out = MountOp::kMask;
  else if (kind == "tmpfs") *out = MountOp::kTmpfs;
  else if (kind == "devpts") *out = MountOp::kDevpts;
  else if (kind == "symlink") *out = MountOp::kSymlink;
  else return false;
  return true;
}

}  // namespace

bool ParsePlan(const std::string& bytes, LaunchPlan* plan, std::string* error) {
  Reader r(bytes);
  std::string word;
  if (!r.Next(&word) || word != "arb-launch-plan/1") {
    *error = "not a launch plan (arb-launch-plan/1)";
    return false;
  }
  auto bad = [&](const std::string& what) {
    *error = "malformed " + what + " record";
    return false;
  };
  bool ended = false;
  while (!ended && r.Next(&word)) {
    uint64_t a, b, c, d;
    if (word == "cwd") {
      if (!r.Next(&plan->cwd) || !AbsolutePath(plan->cwd)) return bad(word);
    } else if (word == "file") {
      if (!r.Next(&plan->file) || !AbsolutePath(plan->file)) return bad(word);
    } else if (word == "argv") {
      if (!r.List(&plan->argv) || plan->argv.empty()) return bad(word);
    } else if (word == "env") {
      if (!r.List(&plan->env)) return bad(word);
    } else if (word == "keep-fd") {
      if (!r.Number(&a) || a < 3 || a > INT_MAX) return bad(word);
      plan->keepFds.push_back(static_cast<int>(a));
    } else if (word == "cwd-fd") {
      if (!r.Number(&a) || a < 3 || a > INT_MAX || plan->cwdFd >= 0) return bad(word);
      plan->cwdFd = static_cast<int>(a);
    } else if (word == "landlock") {
      if (!r.Number(&a) || !r.Number(&b) || !r.Number(&c) || !r.Number(&d) || a == 0) return bad(word);
      plan->landlock.enabled = true;
      plan->landlock.handledFs = a;
      plan->landlock.handledNet = b;
      plan->landlock.scoped = c;
      plan->landlock.restrictFlags = static_cast<uint32_t>(d);
    } else if (word == "rule") {
      PathRule rule;
      if (!r.Next(&rule.path) || !AbsolutePath(rule.path) || !r.Number(&rule.access)) return bad(word);
      plan->landlock.rules.push_back(std::move(rule));
    } else if (word == "net-rule") {
      NetRule rule;
      if (!r.Number(&rule.port) || !r.Number(&rule.access)) return bad(word);
      plan->landlock.netRules.push_back(rule);
    } else if (word == "fallback") {
      Fallback& fb = plan->fallback;
      fb.present = true;
      if (!r.Number(&fb.handledNet) || !r.Flag(&fb.denyNetwork) || !r.Flag(&fb.refuse) || !r.Next(&fb.text)) return bad(word);
    } else if (word == "namespaces") {
      NamespacePlan& ns = plan->namespaces;
      ns.enabled = true;
      if (!r.Flag(&ns.pid) || !r.Flag(&ns.net) || !r.Number(&a) || !r.Number(&b) || a > 4294967294ULL ||
          b > 4294967294ULL || !r.Flag(&ns.mounts.readOnlyRoot)) {
        return bad(word);
      }
      ns.uid = static_cast<uid_t>(a);
      ns.gid = static_cast<gid_t>(b);
    } else if (word == "mount") {
      MountPlan& mounts = plan->namespaces.mounts;
      MountOp op;
      std::string kind;
      if (!r.Next(&kind) || !KindOf(kind, &op.kind) || !r.Next(&op.path) || !AbsolutePath(op.path) ||
          !r.Next(&op.source) || !r.Next(&op.target) || !r.Number(&op.size) || !r.Number(&d) || d > 07777) {
        return bad(word);
      }
      op.mode = static_cast<unsigned int>(d);
      if (!op.source.empty() && !AbsolutePath(op.source)) return bad(word);
      if (op.kind == MountOp::kSymlink && op.target.empty()) return bad(word);
      if (mounts.ops.size() >= kMaxMountOps) return bad("mount (too many)");
      mounts.ops.push_back(std::move(op));
    } else if (word == "seccomp") {
      if (!r.Flag(&plan->seccomp.denyTerminalInjection) || !r.Flag(&plan->seccomp.denyNetwork) || !r.Flag(&plan->seccomp.allowTcp)) return bad(word);
    } else if (word == "proxy-listen") {
      if (!r.Number(&a) || a == 0 || a > 65535) return bad(word);
      plan->proxyListen = static_cast<uint16_t>(a);
    } else if (word == "parent") {
      if (!r.Number(&a) || a == 0 || a > INT_MAX) return bad(word);
      plan->parent = static_cast<pid_t>(a);
    } else if (word == "probe") {
      plan->probe = true;
    } else if (word == "reap") {
      plan->reap = true;
    } else if (word == "on-failure") {
      FailureMessage m;
      if (!r.Next(&m.syscall) || !r.Next(&m.errnoName) || !r.Number(&a) || a > 255 || !r.Next(&m.text)) return bad(word);
      m.exitCode = static_cast<int>(a);
      plan->messages.push_back(std::move(m));
    } else if (word == "end") {
      ended = true;
    } else {
      *error = "unknown record '" + word + "'";
      return false;
    }
  }
  if (!ended) {
    *error = "the plan is cut short (no end record)";
    return false;
  }
  if (!plan->probe && (plan->cwd.empty() || plan->file.empty() || plan->argv.empty())) {
    *error = "the plan names no cwd, file or argv";
    return false;
  }
  if (plan->cwdFd >= 0 && plan->namespaces.enabled) {
    // A directory opened outside would lead out of the mount namespace's view.
    *error = "cwd-fd cannot be used with namespaces";
    return false;
  }
  std::sort(plan->keepFds.begin(), plan->keepFds.end());
  plan->keepFds.erase(std::unique(plan->keepFds.begin(), plan->keepFds.end()), plan->keepFds.end());
  return true;
}

}  // namespace arb
