// The macOS clone engine: clonefile(2) does in one call, in the kernel, what the Linux engine
// does file by file, so the walk here only goes where it must, to the directories that have
// something left out (skipped) somewhere under them.
//
// Two passes, each over a pair of roots that the caller made (reserved) empty:
//   source -> base   with the skip list; then
//   base   -> fork   with nothing to skip (the base already lacks it), so every top-level entry
//                    is one clonefile.
// Per directory made anew (the root, and every directory with something skipped below it):
//   openat(src root, each component, O_DIRECTORY|O_NOFOLLOW)        never through a link
//   openat(dst root, each component, O_DIRECTORY|O_NOFOLLOW)        made by the parent task
//   fdopendir(openat(src, ".")); readdir …                          names as raw bytes
//   per entry, fstatat(AT_SYMLINK_NOFOLLOW), then by its type:
//     directory, nothing skipped below:  clonefileat(src, name, dst, name, CLONE_NOFOLLOW)
//                                        — the whole subtree in one call
//     directory, something skipped below, or the kernel refused the whole clone:
//                                        mkdirat(dst, name, 0700), queued as its own task;
//                                        its owner, mode and times are set after the pass
//     regular file, symbolic link:       clonefileat(…, CLONE_NOFOLLOW) — a link is cloned as
//                                        the link; where clonefile cannot (ENOTSUP: not APFS;
//                                        EXDEV: a mount below the source), a full copy:
//                                        open/read/write, [fchown], fchmod, futimens, or
//                                        readlinkat/symlinkat/utimensat for a link
//     FIFO:                              mkfifo, [fchownat], fchmodat, utimensat — clonefile
//                                        takes a FIFO inside a directory it clones, but not
//                                        one on its own (EINVAL)
//     socket, device:                    left out, reported in leftOut
// After a pass: each directory made anew, deepest first, [fchown], fchmod, futimens; the root
// last. A directory's times are set after its contents, which changed them.
//
// The flags: CLONE_NOFOLLOW, so that a symbolic link is cloned as a link (and a destination
// name that turned into a link is not followed: EEXIST). Not CLONE_NOOWNERCOPY: for a user it
// changes nothing (clonefile gives the caller ownership unless the caller is root), and under
// sudo, copying the owners is what keeps `sudo arb fork` from leaving a user a fork owned by
// root; the Linux engine chowns back for the same reason, and the directories made anew here
// get fchown for it too. clonefile clears set-user-ID and set-group-ID bits of regular files
// either way, so no privilege is copied. Not CLONE_ACL: ACLs come from the destination's
// inheritance, as on Linux where none are copied, and the flag is EINVAL before macOS 13.
//
// What a whole-directory clone keeps that the walk would not: extended attributes, BSD flags
// and ACLs of everything inside, FIFOs and sockets inside. Hard links inside may become
// separate files. Apple's man page calls cloning directories discouraged in favour of
// copyfile(3), which walks in user space; the kernel call is what makes forking a large tree
// instant, and where it refuses (a mount point inside, a volume without clones) the engine
// walks instead, so the refusal costs time, never a file.
//
// Failures: the first one stops every thread and is reported as errno, syscall and path; the
// caller removes the half-made base and fork. An entry removed from the source while the walk
// runs is left out (the base is the source as it was, and it was going away).
#include "darwin/clone_engine.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/clonefile.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/unique_fd.h"
#include "common/work_pool.h"

namespace arb {
namespace {

constexpr uint32_t kCloneFlags = CLONE_NOFOLLOW;
constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// Entries per task: a directory made anew with 100,000 entries is shared between threads.
constexpr size_t kBatch = 128;
constexpr size_t kCopyBuffer = 1 << 20;
constexpr auto kProgressEvery = std::chrono::milliseconds(250);

// What is skipped, as a tree of names: a node marked skipped is left out with everything under
// it; a node with children is a directory that must be made anew, since a clone of it would
// bring the skipped entries along.
struct SkipNode {
  bool skipped = false;
  std::map<std::string, std::unique_ptr<SkipNode>> children;

  const SkipNode* Find(const std::string& name) const {
    auto it = children.find(name);
    return it == children.end() ? nullptr : it->second.get();
  }
};

// Adds one relative path, as the Linux engine reads it: a trailing '/' and a leading './' are
// dropped; an empty path, '.', or an absolute path skips nothing.
void AddSkip(SkipNode* root, std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  while (s.rfind("./", 0) == 0) s.erase(0, 2);
  if (s.empty() || s == "." || s[0] == '/') return;
  SkipNode* node = root;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('/', start);
    if (end == std::string::npos) end = s.size();
    std::string part = s.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".") continue;
    std::unique_ptr<SkipNode>& child = node->children[part];
    if (!child) child = std::make_unique<SkipNode>();
    node = child.get();
  }
  if (node != root) node->skipped = true;
}

// clonefile cannot share blocks here at all: not APFS (HFS+, exFAT, SMB…). Two names, one
// meaning, distinct numbers on macOS.
bool Unsupported(int err) { return err == ENOTSUP || err == EOPNOTSUPP; }

// A whole-directory clone refused for a reason that going entry by entry may get around: no
// clones on this volume, a mount point inside (EINVAL), another device (EXDEV), or an entry
// inside that the kernel will not clone (EPERM/EACCES; the walk then names the entry, or copies
// it where only the clone was refused, as under a sandbox that denies file-clone).
bool WalkInstead(int err) {
  return Unsupported(err) || err == EXDEV || err == EINVAL || err == EPERM || err == EACCES;
}

// A single file or link clone refused where a copy can do: see WalkInstead.
bool CopyInstead(int err) { return Unsupported(err) || err == EXDEV || err == EINVAL || err == EPERM; }

std::string Join(const std::string& rel, const std::string& name) { return rel.empty() ? name : rel + "/" + name; }
std::string Under(const std::string& root, const std::string& rel) { return rel.empty() ? root : root + "/" + rel; }

// Opens a directory below root one component at a time, each with O_NOFOLLOW: a link planted in
// the source while the walk runs cannot lead it out of the tree. (O_NOFOLLOW_ANY would do it in
// one call, but only from macOS 11.)
int OpenBeneath(int root, const std::string& rel) {
  if (rel.empty()) return openat(root, ".", kDirFlags);
  UniqueFd current;
  int at = root;
  size_t start = 0;
  for (;;) {
    size_t end = rel.find('/', start);
    std::string part = rel.substr(start, end == std::string::npos ? std::string::npos : end - start);
    int fd = openat(at, part.c_str(), kDirFlags);
    if (fd < 0) {
      int err = errno;
      current.reset();
      errno = err;
      return -1;
    }
    current.reset(fd);
    at = fd;
    if (end == std::string::npos) return current.release();
    start = end + 1;
  }
}

struct DirFds {
  UniqueFd src, dst;
};

struct Task {
  std::string rel;                  // the directory, relative to both roots
  const SkipNode* node = nullptr;   // what is skipped below it, or null for nothing
  std::shared_ptr<DirFds> fds;      // set for a batch of entries; a listing opens its own
  std::vector<std::string> names;   // the batch
};

// A directory made anew: its owner, mode and times are set once the pass is done.
struct Finish {
  std::string rel;
  struct stat st;
};

class Engine : public WorkPool<Task, DarwinCloneFailure> {
 public:
  explicit Engine(const DarwinCloneOptions& options) : WorkPool(options.cancel), o_(options) {
    for (const std::string& s : o_.skip) AddSkip(&skip_, s);
    euid_ = geteuid();
    egid_ = getegid();
    threads_ = o_.threads != 0 ? o_.threads : std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  }

  bool Run(const std::function<void(uint64_t, uint64_t)>& progress) {
    // A destination inside its source (`arb fork . sub/dest`) is skipped like an ignored path,
    // so that neither the walk nor a whole-directory clone of one of its parents takes it in.
    std::string source_real, base_real, fork_real;
    if (!RealPath(o_.source, &source_real) || !RealPath(o_.base, &base_real)) return false;
    SkipInside(&skip_, source_real, base_real);
    if (!o_.fork.empty()) {
      if (!RealPath(o_.fork, &fork_real)) return false;
      SkipInside(&skip_, source_real, fork_real);
    }
    if (!RunPass(o_.source, o_.base, &skip_, true, progress)) return false;
    if (o_.fork.empty()) return true;
    SkipNode fork_skip;
    SkipInside(&fork_skip, base_real, fork_real);
    return RunPass(o_.base, o_.fork, &fork_skip, false, progress);
  }

  void Totals(DarwinCloneTotals* t) const {
    t->files = files_;
    t->directories = directories_;
    t->symlinks = symlinks_;
    t->fifos = fifos_;
    t->bytes = bytes_;
    t->reflinked = reflinked_;
    t->copied = copied_;
    t->cloned_whole = cloned_whole_;
    t->left_out.clear();
    std::set<std::string> seen;  // the fork pass may meet what the base pass left out
    for (const DarwinLeftOut& l : left_out_) {
      if (seen.insert(l.path).second) t->left_out.push_back(l);
    }
  }

 private:
  bool RealPath(const std::string& path, std::string* out) {
    char* resolved = realpath(path.c_str(), nullptr);
    if (!resolved) return Fail({errno, "realpath", path});
    *out = resolved;
    std::free(resolved);
    return true;
  }

  static void SkipInside(SkipNode* tree, const std::string& outer, const std::string& inner) {
    if (outer == "/") {
      AddSkip(tree, inner.substr(1));
      return;
    }
    if (inner.size() > outer.size() + 1 && inner.compare(0, outer.size(), outer) == 0 && inner[outer.size()] == '/') {
      AddSkip(tree, inner.substr(outer.size() + 1));
    }
  }

  // --- one pass ----------------------------------------------------------------------------

  bool RunPass(const std::string& src, const std::string& dst, const SkipNode* skip, bool first,
               const std::function<void(uint64_t, uint64_t)>& progress) {
    src_path_ = src;
    dst_path_ = dst;
    first_ = first;
    finishes_.clear();
    // The source root may be reached through links (TypeScript resolved it); below it, none.
    src_root_.reset(open(src.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!src_root_.valid()) return Fail({errno, "open", src});
    if (fstat(src_root_.get(), &root_st_) != 0) return Fail({errno, "fstat", src});
    dst_root_.reset(open(dst.c_str(), kDirFlags));
    if (!dst_root_.valid()) return Fail({errno, "open", dst});
    struct stat st;
    if (fstat(dst_root_.get(), &st) != 0) return Fail({errno, "fstat", dst});
    dst_dev_ = st.st_dev;
    dst_ino_ = st.st_ino;

    Push(Task{"", skip, nullptr, {}});
    std::function<void()> tick;
    if (first_ && progress) tick = [this, &progress] { progress(files_.load(), bytes_.load()); };
    if (!RunTasks(threads_, kProgressEvery, [this](Task& task) { Handle(task); }, tick)) return false;
    if (Stopped()) return false;
    return FinishDirectories();
  }

  // --- the queue ---------------------------------------------------------------------------

  // A task: list a directory made anew, or take a batch of its entries.
  void Handle(const Task& task) {
    if (task.fds) {
      for (const std::string& name : task.names) {
        if (Stopped()) break;
        Entry(task.rel, task.node, *task.fds, name);
      }
    } else {
      List(task);
    }
  }

  // --- a directory made anew -----------------------------------------------------------------

  void List(const Task& task) {
    if (Stopped()) return;
    auto fds = std::make_shared<DirFds>();
    fds->src.reset(OpenBeneath(src_root_.get(), task.rel));
    if (!fds->src.valid()) {
      if (errno == ENOENT && !task.rel.empty()) return;  // removed meanwhile: stays empty
      Fail({errno, "open", Under(src_path_, task.rel)});
      return;
    }
    fds->dst.reset(OpenBeneath(dst_root_.get(), task.rel));
    if (!fds->dst.valid()) {
      Fail({errno, "open", Under(dst_path_, task.rel)});
      return;
    }
    // fdopendir owns the descriptor it is given: it gets one of its own, so that fds->src stays
    // open for the batches' *at calls after the listing is closed.
    int list_fd = openat(fds->src.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (list_fd < 0) {
      Fail({errno, "open", Under(src_path_, task.rel)});
      return;
    }
    DIR* dir = fdopendir(list_fd);
    if (!dir) {
      int err = errno;
      close(list_fd);
      Fail(err, "fdopendir", Under(src_path_, task.rel));
      return;
    }
    std::unique_ptr<DIR, int (*)(DIR*)> closer(dir, closedir);
    std::vector<std::string> batch;
    for (;;) {
      errno = 0;
      struct dirent* d = readdir(dir);
      if (!d) {
        if (errno != 0) {
          Fail({errno, "readdir", Under(src_path_, task.rel)});
          return;
        }
        break;
      }
      const char* name = d->d_name;
      if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
      if (Stopped()) return;
      if (task.node) {
        const SkipNode* child = task.node->Find(name);
        if (child && child->skipped) continue;
      }
      batch.emplace_back(name);
      if (batch.size() == kBatch) {
        Push(Task{task.rel, task.node, fds, std::move(batch)});
        batch.clear();
      }
    }
    for (const std::string& name : batch) {
      if (Stopped()) return;
      Entry(task.rel, task.node, *fds, name);
    }
  }

  void Entry(const std::string& rel, const SkipNode* node, DirFds& fds, const std::string& name) {
    const std::string child_rel = Join(rel, name);
    struct stat st;
    if (fstatat(fds.src.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) Fail({errno, "fstatat", Under(src_path_, child_rel)});
      return;  // removed meanwhile
    }
    switch (st.st_mode & S_IFMT) {
      case S_IFDIR:
        Directory(fds, name, child_rel, node ? node->Find(name) : nullptr, st);
        return;
      case S_IFREG:
      case S_IFLNK:
        FileOrLink(fds, name, child_rel, st);
        return;
      case S_IFIFO:
        Fifo(fds, name, child_rel, st);
        return;
      case S_IFSOCK:
        AddLeftOut(child_rel, "socket");
        return;
      default:  // character and block devices
        AddLeftOut(child_rel, "device");
        return;
    }
  }

  void AddLeftOut(const std::string& rel, const char* kind) {
    std::lock_guard<std::mutex> lock(left_mu_);
    left_out_.push_back(DarwinLeftOut{rel, kind});
  }

  void Directory(DirFds& fds, const std::string& name, const std::string& rel, const SkipNode* child,
                 const struct stat& st) {
    // The destination itself, if it is inside the source, is never taken in (SkipInside already
    // leaves it out by name; this holds if the name was reached another way).
    if (st.st_dev == dst_dev_ && st.st_ino == dst_ino_) return;
    if (!child && cloning_.load(std::memory_order_relaxed)) {
      if (clonefileat(fds.src.get(), name.c_str(), fds.dst.get(), name.c_str(), kCloneFlags) == 0) {
        cloned_whole_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      int err = errno;
      if (err == ENOENT) return;  // removed meanwhile
      if (!WalkInstead(err)) {
        Fail(err, "clonefile", Under(src_path_, rel));
        return;
      }
      if (Unsupported(err)) cloning_.store(false, std::memory_order_relaxed);
    }
    if (mkdirat(fds.dst.get(), name.c_str(), 0700) != 0) {
      Fail({errno, "mkdir", Under(dst_path_, rel)});
      return;
    }
    if (first_) directories_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(finish_mu_);
      finishes_.push_back(Finish{rel, st});
    }
    Push(Task{rel, child, nullptr, {}});
  }

  // --- entries beside something skipped ------------------------------------------------------

  void FileOrLink(DirFds& fds, const std::string& name, const std::string& rel, const struct stat& st) {
    const bool link = S_ISLNK(st.st_mode);
    bool cloned = false;
    if (cloning_.load(std::memory_order_relaxed)) {
      if (clonefileat(fds.src.get(), name.c_str(), fds.dst.get(), name.c_str(), kCloneFlags) == 0) {
        cloned = true;
      } else {
        int err = errno;
        if (err == ENOENT) return;  // removed meanwhile
        if (!CopyInstead(err)) {
          Fail(err, "clonefile", Under(src_path_, rel));
          return;
        }
        if (Unsupported(err)) cloning_.store(false, std::memory_order_relaxed);
      }
    }
    if (!cloned) {
      int made = link ? CopyLink(fds, name, rel, st) : CopyFile(fds, name, rel);
      if (made <= 0) return;  // failed (recorded) or removed meanwhile
    }
    if (!link && st.st_size > 0) (cloned ? reflinked_ : copied_).fetch_add(1, std::memory_order_relaxed);
    if (!first_) return;
    if (link) {
      symlinks_.fetch_add(1, std::memory_order_relaxed);
    } else {
      files_.fetch_add(1, std::memory_order_relaxed);
      bytes_.fetch_add(static_cast<uint64_t>(st.st_size), std::memory_order_relaxed);
    }
  }

  // Fail, for the copies' 1/0/-1 results: Failed({errno, "open", path}) reads errno first.
  int Failed(const At& at) {
    Fail(at);
    return -1;
  }

  bool NeedsOwner(const struct stat& st) const { return st.st_uid != euid_ || st.st_gid != egid_; }

  // 1: copied; 0: the source went away meanwhile; -1: failed (recorded).
  int CopyFile(DirFds& fds, const std::string& name, const std::string& rel) {
    // O_NONBLOCK: a name that turned into a FIFO since fstatat does not block a thread.
    UniqueFd in(openat(fds.src.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!in.valid()) {
      if (errno == ENOENT) return 0;
      return Failed({errno, "open", Under(src_path_, rel)});
    }
    struct stat st;
    if (fstat(in.get(), &st) != 0) return Failed({errno, "fstat", Under(src_path_, rel)});
    if (!S_ISREG(st.st_mode)) return 0;  // replaced meanwhile by something else
    const std::string dst = Under(dst_path_, rel);
    UniqueFd out(openat(fds.dst.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out.valid()) return Failed({errno, "open", dst});
    thread_local std::unique_ptr<char[]> buffer;
    if (!buffer) buffer.reset(new char[kCopyBuffer]);
    for (;;) {
      ssize_t n = read(in.get(), buffer.get(), kCopyBuffer);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Failed({errno, "read", Under(src_path_, rel)});
      }
      if (n == 0) break;
      for (ssize_t off = 0; off < n;) {
        ssize_t w = write(out.get(), buffer.get() + off, static_cast<size_t>(n - off));
        if (w < 0) {
          if (errno == EINTR) continue;
          return Failed({errno, "write", dst});
        }
        off += w;
      }
    }
    if (NeedsOwner(st)) (void)!fchown(out.get(), st.st_uid, st.st_gid);  // as far as the user may
    // As clonefile does: set-user-ID and set-group-ID bits are not copied.
    if (fchmod(out.get(), st.st_mode & 01777) != 0) return Failed({errno, "fchmod", dst});
    const struct timespec times[2] = {st.st_atimespec, st.st_mtimespec};
    if (futimens(out.get(), times) != 0) return Failed({errno, "futimens", dst});
    return 1;
  }

  int CopyLink(DirFds& fds, const std::string& name, const std::string& rel, const struct stat& st) {
    std::string target(st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1 : 256, '\0');
    for (;;) {
      ssize_t n = readlinkat(fds.src.get(), name.c_str(), &target[0], target.size());
      if (n < 0) {
        if (errno == ENOENT) return 0;
        return Failed({errno, "readlink", Under(src_path_, rel)});
      }
      if (static_cast<size_t>(n) < target.size()) {
        target.resize(static_cast<size_t>(n));
        break;
      }
      target.resize(target.size() * 2);  // the link changed meanwhile and grew
    }
    const std::string dst = Under(dst_path_, rel);
    if (symlinkat(target.c_str(), fds.dst.get(), name.c_str()) != 0) return Failed({errno, "symlink", dst});
    if (NeedsOwner(st)) (void)!fchownat(fds.dst.get(), name.c_str(), st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
    const struct timespec times[2] = {st.st_atimespec, st.st_mtimespec};
    if (utimensat(fds.dst.get(), name.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
      return Failed({errno, "utimensat", dst});
    }
    return 1;
  }

  void Fifo(DirFds& fds, const std::string& name, const std::string& rel, const struct stat& st) {
    const std::string dst = Under(dst_path_, rel);
    // By path: mkfifoat arrived only in macOS 13. Every component below the destination root
    // was made by this engine, so the path names what the descriptor does.
    if (mkfifo(dst.c_str(), st.st_mode & 07777) != 0) {
      Fail({errno, "mkfifo", dst});
      return;
    }
    if (NeedsOwner(st)) (void)!fchownat(fds.dst.get(), name.c_str(), st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
    // mkfifo applied the umask; the source's mode is set whole.
    if (fchmodat(fds.dst.get(), name.c_str(), st.st_mode & 07777, 0) != 0) {
      Fail({errno, "fchmodat", dst});
      return;
    }
    const struct timespec times[2] = {st.st_atimespec, st.st_mtimespec};
    if (utimensat(fds.dst.get(), name.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
      Fail({errno, "utimensat", dst});
      return;
    }
    if (first_) fifos_.fetch_add(1, std::memory_order_relaxed);
  }

  // --- after a pass ----------------------------------------------------------------------------

  // Deepest first, so that a parent's restrictive mode never stands in the way of reaching its
  // children, and the root last.
  bool FinishDirectories() {
    auto depth = [](const std::string& rel) { return std::count(rel.begin(), rel.end(), '/'); };
    std::stable_sort(finishes_.begin(), finishes_.end(),
                     [&depth](const Finish& a, const Finish& b) { return depth(a.rel) > depth(b.rel); });
    for (const Finish& f : finishes_) {
      if (Stopped()) return false;
      UniqueFd fd(OpenBeneath(dst_root_.get(), f.rel));
      if (!fd.valid()) return Fail({errno, "open", Under(dst_path_, f.rel)});
      if (!SetAttributes(fd.get(), f.st, Under(dst_path_, f.rel))) return false;
    }
    return SetAttributes(dst_root_.get(), root_st_, dst_path_);
  }

  bool SetAttributes(int fd, const struct stat& st, const std::string& path) {
    if (NeedsOwner(st)) (void)!fchown(fd, st.st_uid, st.st_gid);  // as far as the user may
    if (fchmod(fd, st.st_mode & 07777) != 0) return Fail({errno, "fchmod", path});
    const struct timespec times[2] = {st.st_atimespec, st.st_mtimespec};
    if (futimens(fd, times) != 0) return Fail({errno, "futimens", path});
    return true;
  }

  const DarwinCloneOptions& o_;
  SkipNode skip_;
  uid_t euid_;
  gid_t egid_;
  unsigned threads_;

  // The pass under way.
  std::string src_path_, dst_path_;
  bool first_ = true;
  UniqueFd src_root_, dst_root_;
  struct stat root_st_ {};
  dev_t dst_dev_ = 0;
  ino_t dst_ino_ = 0;
  std::mutex finish_mu_;
  std::vector<Finish> finishes_;

  // Cleared for good once clonefile says the volume has no clones, so that a tree on HFS+ is
  // copied without first asking for each entry.
  std::atomic<bool> cloning_{true};
  std::atomic<uint64_t> files_{0}, directories_{0}, symlinks_{0}, fifos_{0}, bytes_{0};
  std::atomic<uint64_t> reflinked_{0}, copied_{0}, cloned_whole_{0};

  std::mutex left_mu_;
  std::vector<DarwinLeftOut> left_out_;
};

}  // namespace

bool DarwinCloneTree(const DarwinCloneOptions& options, const std::function<void(uint64_t, uint64_t)>& progress,
                     DarwinCloneTotals* totals, DarwinCloneFailure* failure) {
  Engine engine(options);
  bool ok = engine.Run(progress);
  if (!ok) {
    *failure = engine.failure();
    return false;
  }
  engine.Totals(totals);
  return true;
}

}  // namespace arb
