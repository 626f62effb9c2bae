// cloneTree: the clone engine behind `arb fork`. One pass over a source tree makes its base and,
// from each new base file, the fork's copy, on a small pool of threads, off the main thread.
//
// Why native and why this shape: a fork is what an agent waits for, and a tree holds thousands of
// files. Per file the work is a handful of system calls, so a round trip into JavaScript per file
// (or one libuv request per call, as fs.cp makes) would cost more than the cloning itself. The
// whole walk therefore runs here; JavaScript decides what to leave out (`skip`) and makes every
// message, and hears back only totals, now and then, and the result or the first failure as
// facts (errno, syscall, path).
//
// Per directory (a "listing" task):
//   openat2(src root, rel, O_DIRECTORY|O_NOFOLLOW, RESOLVE_NO_SYMLINKS)   never through a link
//   openat2(base root, rel) and openat2(fork root, rel)                   made by the parent task
//   getdents64 …                          names as raw bytes: spaces, newlines, 0xff all survive
//     directory:  fstatat(AT_SYMLINK_NOFOLLOW); mkdirat(base) and mkdirat(fork) with 0700 (so the
//                 tree can be filled whatever the source's mode); queued as its own task
//     regular:    batched (a big directory is shared between threads), see below
//     symlink:    readlinkat; symlinkat in base and fork; utimensat(AT_SYMLINK_NOFOLLOW)
//     FIFO:       mkfifoat; openat(O_NONBLOCK|O_NOFOLLOW); fchmod; futimens
//     socket, device: left out, reported in leftOut
// Per regular file:
//   openat(src, O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_NOATIME|O_CLOEXEC), fstat     opened once
//   openat(base, O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW); ioctl(FICLONE, src)
//   openat(fork, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW); ioctl(FICLONE, base)    fork = base
//   where FICLONE cannot share blocks (EOPNOTSUPP, EXDEV, EINVAL, ENOTTY…): copy_file_range,
//   then pread/pwrite where that is refused too, the data only (SEEK_DATA) of a sparse file;
//   once FICLONE is known not to work, a file of up to 1 MB that is not sparse is read once
//   and written to base and fork alike (CopyToBoth);
//   [fchown]; [fchmod] (after the content, which
//   would clear set-user-ID bits); futimens (last, as writing sets the time)
// A directory's owner, mode and times are set once everything in it is done (a counter per
// directory), so deepest first, and after its contents changed its modification time; through a
// descriptor opened beneath the root (openat2 RESOLVE_NO_SYMLINKS), never by path.
//
// O_NONBLOCK keeps a name that turned into a FIFO between getdents and open from blocking a
// thread; O_NOATIME (where the owner allows it) keeps the source's access times as they were.
// On the first failure every thread stops and the failure is reported; JavaScript removes the
// half-made base and fork.
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/clone_worker.h"
#include "common/errno_error.h"
#include "common/unique_fd.h"
#include "common/work_pool.h"
#include "linux/modules.h"

namespace arb {
namespace {

// Files per task: a directory of 100,000 files is shared between threads in pieces this big.
constexpr size_t kBatch = 128;
constexpr size_t kCopyBuffer = 1 << 20;
constexpr auto kProgressEvery = std::chrono::milliseconds(250);

struct Options {
  std::string source;
  std::string base;
  std::string fork;  // empty: no fork
  std::vector<std::string> skip;
  unsigned threads = 0;
  const int32_t* cancel = nullptr;  // non-zero asks every thread to stop
};

struct LeftOut {
  std::string path;
  const char* kind;
};

struct Totals {
  uint64_t files = 0, directories = 0, symlinks = 0, fifos = 0, bytes = 0, reflinked = 0, copied = 0;
};

// A directory being made: done when its own listing, its batches of files and its
// subdirectories are all done (pending reaches zero); then its mode and times are set.
struct DirNode {
  std::string rel;  // relative to the roots, raw bytes; "" for the root
  std::shared_ptr<DirNode> parent;
  std::atomic<int> pending{1};
  struct stat st {};
};

// The three open directories a listing task works in, shared with its batches of files.
struct DirFds {
  UniqueFd src, base, fork;
};

struct Task {
  std::shared_ptr<DirNode> node;
  std::shared_ptr<DirFds> fds;     // set for a batch of files; a listing opens its own
  std::vector<std::string> names;  // the batch
};

struct linux_dirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// Opens a path below root without following any symbolic link on the way: a link planted in
// the source between listing and opening cannot lead the walk out of the tree.
int OpenBeneath(int root, const std::string& rel, int flags) {
  static std::atomic<bool> have_openat2{true};
  const char* p = rel.empty() ? "." : rel.c_str();
  if (have_openat2.load(std::memory_order_relaxed)) {
    struct open_how how;
    std::memset(&how, 0, sizeof how);
    how.flags = static_cast<uint64_t>(flags);
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd;
    do {
      fd = syscall(SYS_openat2, root, p, &how, sizeof how);
    } while (fd < 0 && (errno == EINTR || errno == EAGAIN));
    if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
    have_openat2.store(false, std::memory_order_relaxed);  // before Linux 5.6
  }
  return openat(root, p, flags | O_NOFOLLOW);
}

mode_t CurrentUmask() {
  // Read, not set: umask(2) would change it for every thread of the process meanwhile.
  FILE* f = std::fopen("/proc/self/status", "re");
  mode_t mask = 0777;  // unknown: assume the worst, so every mode is set with fchmod
  if (!f) return mask;
  char line[256];
  while (std::fgets(line, sizeof line, f)) {
    unsigned m;
    if (std::sscanf(line, "Umask: %o", &m) == 1) {
      mask = static_cast<mode_t>(m);
      break;
    }
  }
  std::fclose(f);
  return mask;
}

class Engine : public WorkPool<Task, ErrnoFailure> {
 public:
  explicit Engine(Options options) : WorkPool(options.cancel), o_(std::move(options)) {
    for (std::string s : o_.skip) {
      while (s.size() > 1 && s.back() == '/') s.pop_back();
      if (s.rfind("./", 0) == 0) s.erase(0, 2);
      if (s.empty() || s == "." || s == "/") continue;
      skip_.insert(s);
      // Every directory above a skipped path: only those need their entries looked up.
      skip_dirs_.insert("");
      for (size_t i = s.find('/'); i != std::string::npos; i = s.find('/', i + 1)) skip_dirs_.insert(s.substr(0, i));
    }
    euid_ = geteuid();
    egid_ = getegid();
    umask_ = CurrentUmask();
  }

  // Runs the whole clone on this thread and `threads` others; calls progress every so often.
  // Returns false with failure() set if anything failed.
  bool Run(const std::function<void(uint64_t, uint64_t)>& progress) {
    if (!OpenRoots()) return false;
    auto root = std::make_shared<DirNode>();
    root->st = root_st_;
    Push(Task{root, nullptr, {}});

    unsigned n = o_.threads;
    if (n == 0) n = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
    std::function<void()> tick;
    if (progress) tick = [this, &progress] { progress(files_.load(), bytes_.load()); };
    return RunTasks(n, kProgressEvery, [this](Task& task) { Handle(task); }, tick);
  }

  const std::vector<LeftOut>& left_out() const { return left_out_; }
  Totals totals() const {
    Totals t;
    t.files = files_;
    t.directories = directories_;
    t.symlinks = symlinks_;
    t.fifos = fifos_;
    t.bytes = bytes_;
    t.reflinked = reflinked_;
    t.copied = copied_;
    return t;
  }

 private:
  bool has_fork() const { return !o_.fork.empty(); }

  bool OpenRoots() {
    // The source root may be reached through links (TypeScript resolved it); below it, none.
    src_root_.reset(open(o_.source.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!src_root_.valid()) return Fail({errno, "open", o_.source});
    if (fstat(src_root_.get(), &root_st_) != 0) return Fail({errno, "fstat", o_.source});
    // The roots of base and fork were made (reserved) by the caller, empty.
    base_root_.reset(open(o_.base.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!base_root_.valid()) return Fail({errno, "open", o_.base});
    struct stat st;
    if (fstat(base_root_.get(), &st) != 0) return Fail({errno, "fstat", o_.base});
    base_dev_ = st.st_dev;
    base_ino_ = st.st_ino;
    if (has_fork()) {
      fork_root_.reset(open(o_.fork.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!fork_root_.valid()) return Fail({errno, "open", o_.fork});
      if (fstat(fork_root_.get(), &st) != 0) return Fail({errno, "fstat", o_.fork});
      fork_dev_ = st.st_dev;
      fork_ino_ = st.st_ino;
    }
    return true;
  }

  // --- the queue ---------------------------------------------------------------------------

  // A task: list a directory, or clone a batch of its files; then count that part of the
  // directory's work done (the last part sets its mode and times).
  void Handle(Task& task) {
    if (task.fds) {
      for (const std::string& name : task.names) {
        if (Stopped()) break;
        CloneFile(task.node, *task.fds, name, true);
      }
      task.fds.reset();
    } else {
      List(task.node);
    }
    Release(std::move(task.node));
  }

  // --- paths for messages ------------------------------------------------------------------

  static std::string Join(const std::string& rel, const std::string& name) {
    return rel.empty() ? name : rel + "/" + name;
  }
  static std::string Under(const std::string& root, const std::string& rel) {
    return rel.empty() ? root : root + "/" + rel;
  }

  // --- directories -------------------------------------------------------------------------

  void List(const std::shared_ptr<DirNode>& node) {
    if (Stopped()) return;
    auto fds = std::make_shared<DirFds>();
    const int dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int noatime = node->st.st_uid == euid_ || euid_ == 0 ? O_NOATIME : 0;
    fds->src.reset(OpenBeneath(src_root_.get(), node->rel, dir_flags | noatime));
    if (!fds->src.valid() && errno == EPERM && noatime) fds->src.reset(OpenBeneath(src_root_.get(), node->rel, dir_flags));
    if (!fds->src.valid()) {
      if (errno == ENOENT && !node->rel.empty()) return;  // removed meanwhile: stays empty
      Fail({errno, "open", Under(o_.source, node->rel)});
      return;
    }
    fds->base.reset(OpenBeneath(base_root_.get(), node->rel, dir_flags));
    if (!fds->base.valid()) {
      Fail({errno, "open", Under(o_.base, node->rel)});
      return;
    }
    if (has_fork()) {
      fds->fork.reset(OpenBeneath(fork_root_.get(), node->rel, dir_flags));
      if (!fds->fork.valid()) {
        Fail({errno, "open", Under(o_.fork, node->rel)});
        return;
      }
    }
    const bool check_skip = skip_dirs_.count(node->rel) != 0;

    alignas(linux_dirent64) char buf[32768];
    std::vector<std::string> batch;
    for (;;) {
      long n = syscall(SYS_getdents64, fds->src.get(), buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        Fail({errno, "getdents64", Under(o_.source, node->rel)});
        return;
      }
      if (n == 0) break;
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<linux_dirent64*>(buf + off);
        off += d->d_reclen;
        const char* name = d->d_name;
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
        if (Stopped()) return;
        if (check_skip && skip_.count(Join(node->rel, name))) continue;
        if (d->d_type == DT_REG) {
          batch.emplace_back(name);
          if (batch.size() == kBatch) {
            node->pending.fetch_add(1);
            Push(Task{node, fds, std::move(batch)});
            batch.clear();
          }
        } else {
          Other(node, *fds, name, true);
        }
      }
    }
    for (const std::string& name : batch) {
      if (Stopped()) return;
      CloneFile(node, *fds, name, true);
    }
  }

  // Called when a part of a directory's work is done; the last part sets its mode and times,
  // then counts as a part of its parent's.
  void Release(std::shared_ptr<DirNode> node) {
    while (node && node->pending.fetch_sub(1) == 1) {
      if (Stopped()) return;
      if (!FinishDir(*node, base_root_.get(), o_.base)) return;
      if (has_fork() && !FinishDir(*node, fork_root_.get(), o_.fork)) return;
      node = node->parent;
    }
  }

  bool NeedsOwner(const struct stat& st) const { return st.st_uid != euid_ || st.st_gid != egid_; }

  bool FinishDir(const DirNode& node, int root, const std::string& root_path) {
    const struct stat& st = node.st;
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    const mode_t mode = st.st_mode & 07777;
    // Through a descriptor opened beneath the root without following any link, never by path:
    // where a process left running by a confined command can write (a fork made inside a fork,
    // or under /tmp), it could swap the directory for a link while the clone runs, and a
    // chmod by path would follow it out of the tree (making ~/.ssh 0777, say).
    UniqueFd opened;
    int fd = root;
    if (!node.rel.empty()) {
      opened.reset(OpenBeneath(root, node.rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!opened.valid()) return Fail({errno, "open", Under(root_path, node.rel)});
      fd = opened.get();
    }
    const std::string where = Under(root_path, node.rel);
    if (NeedsOwner(st)) (void)!fchown(fd, st.st_uid, st.st_gid);  // as the user may
    if (fchmod(fd, mode) != 0) return Fail({errno, "fchmod", where});
    if (futimens(fd, times) != 0) return Fail({errno, "futimens", where});
    return true;
  }

  // Anything but a regular file known as such from getdents: looked at with fstatat.
  void Other(const std::shared_ptr<DirNode>& node, DirFds& fds, const char* name, bool allow_file) {
    struct stat st;
    if (fstatat(fds.src.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) Fail({errno, "fstatat", Under(o_.source, Join(node->rel, name))});
      return;  // removed meanwhile
    }
    switch (st.st_mode & S_IFMT) {
      case S_IFDIR:
        MakeDir(node, fds, name, st);
        return;
      case S_IFLNK:
        CloneSymlink(*node, fds, name, st);
        return;
      case S_IFIFO:
        MakeFifo(*node, fds, name, st);
        return;
      case S_IFREG:
        if (allow_file) CloneFile(node, fds, name, false);
        return;
      case S_IFSOCK:
        AddLeftOut(Join(node->rel, name), "socket");
        return;
      default:  // character and block devices
        AddLeftOut(Join(node->rel, name), "device");
        return;
    }
  }

  void AddLeftOut(std::string rel, const char* kind) {
    std::lock_guard<std::mutex> lock(left_mu_);
    left_out_.push_back(LeftOut{std::move(rel), kind});
  }

  void MakeDir(const std::shared_ptr<DirNode>& node, DirFds& fds, const char* name, const struct stat& st) {
    // The base and fork themselves, if they are inside the source, are never walked into.
    if ((st.st_dev == base_dev_ && st.st_ino == base_ino_) || (has_fork() && st.st_dev == fork_dev_ && st.st_ino == fork_ino_)) return;
    std::string rel = Join(node->rel, name);
    if (mkdirat(fds.base.get(), name, 0700) != 0) {
      Fail({errno, "mkdir", Under(o_.base, rel)});
      return;
    }
    if (has_fork() && mkdirat(fds.fork.get(), name, 0700) != 0) {
      Fail({errno, "mkdir", Under(o_.fork, rel)});
      return;
    }
    directories_.fetch_add(1, std::memory_order_relaxed);
    auto child = std::make_shared<DirNode>();
    child->rel = std::move(rel);
    child->parent = node;
    child->st = st;
    node->pending.fetch_add(1);
    Push(Task{std::move(child), nullptr, {}});
  }

  // --- files -------------------------------------------------------------------------------

  // Sets owner (as the user may), mode where creation did not, and times, on a new file.
  bool FinishFile(int fd, const struct stat& st, const std::string& root, const std::string& rel) {
    const mode_t mode = st.st_mode & 07777;
    bool chmod_needed = mode != ((st.st_mode & 0777) & ~umask_);
    if (NeedsOwner(st) && fchown(fd, st.st_uid, st.st_gid) == 0 && (mode & 06000)) chmod_needed = true;
    if (chmod_needed && fchmod(fd, mode) != 0) {
      // Set-group-ID for a group the user is not in, say: keep the rest of the mode.
      if (errno != EPERM || fchmod(fd, mode & 0777) != 0) return Fail({errno, "fchmod", Under(root, rel)});
    }
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    if (futimens(fd, times) != 0) return Fail({errno, "futimens", Under(root, rel)});
    return true;
  }

  // Copies all of in to out: blocks shared where the file system can, else a full copy, which
  // keeps the holes of a sparse file (`sparse`: it has fewer blocks than its size needs).
  // Returns 0 or an errno, with *syscall_name set.
  int CopyData(int in, int out, const struct stat& st, std::atomic<bool>& try_clone, bool* cloned, const char** syscall_name) {
    *cloned = false;
    if (try_clone.load(std::memory_order_relaxed)) {
      if (ioctl(out, FICLONE, in) == 0) {
        *cloned = true;
        return 0;
      }
      switch (errno) {
        case EOPNOTSUPP:
        case ENOTTY:
        case ENOSYS:
        case EXDEV:
          // The file system (or the pair) cannot share blocks: stop asking, for every file.
          try_clone.store(false, std::memory_order_relaxed);
          break;
        case EINVAL:
        case EPERM:
        case ETXTBSY:
          break;  // this file only
        default:
          *syscall_name = "ioctl(FICLONE)";
          return errno;
      }
    }
    const bool sparse = static_cast<off_t>(st.st_blocks) * 512 < st.st_size;
    if (!sparse) return CopyRange(in, out, 0, -1, syscall_name);
    // Only the data, segment by segment (lseek SEEK_DATA/SEEK_HOLE); the holes stay holes.
    off_t pos = 0;
    for (;;) {
      off_t data = lseek(in, pos, SEEK_DATA);
      if (data < 0) {
        if (errno == ENXIO) break;  // no data after pos
        if (errno == EINVAL || errno == EOPNOTSUPP) return CopyRange(in, out, 0, -1, syscall_name);
        *syscall_name = "lseek";
        return errno;
      }
      off_t hole = lseek(in, data, SEEK_HOLE);
      if (hole < 0) {
        *syscall_name = "lseek";
        return errno;
      }
      int err = CopyRange(in, out, data, hole - data, syscall_name);
      if (err) return err;
      pos = hole;
    }
    if (ftruncate(out, st.st_size) != 0) {
      *syscall_name = "ftruncate";
      return errno;
    }
    return 0;
  }

  // Copies len bytes from offset off (len < 0: up to the end) with copy_file_range, or with
  // pread/pwrite where the kernel or file system refuses it.
  int CopyRange(int in, int out, off_t off, off_t len, const char** syscall_name) {
    loff_t off_in = off, off_out = off;
    const loff_t end = len < 0 ? -1 : off + len;
    auto left = [&](size_t most) -> size_t { return end < 0 ? most : static_cast<size_t>(std::min<loff_t>(end - off_in, static_cast<loff_t>(most))); };
    bool plain = !copy_range_.load(std::memory_order_relaxed);
    while (!plain) {
      if (end >= 0 && off_in >= end) return 0;
      ssize_t n = copy_file_range(in, &off_in, out, &off_out, left(size_t{1} << 30), 0);
      if (n > 0) continue;
      if (n == 0) return 0;
      if (errno == EINTR) continue;
      if (off_in == off && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP || errno == EBADF)) {
        if (errno == ENOSYS) copy_range_.store(false, std::memory_order_relaxed);
        plain = true;
        break;
      }
      *syscall_name = "copy_file_range";
      return errno;
    }
    thread_local std::unique_ptr<char[]> buf(new char[kCopyBuffer]);
    for (;;) {
      if (end >= 0 && off_in >= end) return 0;
      ssize_t n = pread(in, buf.get(), left(kCopyBuffer), off_in);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        *syscall_name = "read";
        return errno;
      }
      if (n == 0) return 0;
      for (ssize_t done = 0; done < n;) {
        ssize_t w = pwrite(out, buf.get() + done, static_cast<size_t>(n - done), off_out);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
          *syscall_name = "write";
          return errno;
        }
        done += w;
        off_out += w;
      }
      off_in += n;
    }
  }

  void CloneFile(const std::shared_ptr<DirNode>& dir, DirFds& fds, const std::string& name, bool allow_other) {
    const DirNode& node = *dir;
    const int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    UniqueFd src(openat(fds.src.get(), name.c_str(), flags | (noatime_.load(std::memory_order_relaxed) ? O_NOATIME : 0)));
    if (!src.valid() && errno == EPERM && noatime_.load(std::memory_order_relaxed)) {
      // Not the owner: O_NOATIME is refused, and would be again for the next files, mostly.
      noatime_.store(false, std::memory_order_relaxed);
      src.reset(openat(fds.src.get(), name.c_str(), flags));
    }
    if (!src.valid()) {
      int err = errno;
      if (err == ENOENT) return;  // removed meanwhile
      if (err == ELOOP && allow_other) {
        Other(dir, fds, name.c_str(), false);  // replaced by a symbolic link meanwhile
        return;
      }
      Fail(err, "open", Under(o_.source, Join(node.rel, name)));
      return;
    }
    struct stat st;
    if (fstat(src.get(), &st) != 0) {
      Fail({errno, "fstat", Under(o_.source, Join(node.rel, name))});
      return;
    }
    if (!S_ISREG(st.st_mode)) {
      src.reset();
      if (allow_other) Other(dir, fds, name.c_str(), false);  // no longer a file: look again
      return;
    }
    const std::string rel = Join(node.rel, name);
    if (has_fork() && st.st_size > 0 && st.st_size <= static_cast<off_t>(kCopyBuffer) && static_cast<off_t>(st.st_blocks) * 512 >= st.st_size &&
        !clone_to_base_.load(std::memory_order_relaxed) && !clone_to_fork_.load(std::memory_order_relaxed)) {
      CopyToBoth(src.get(), fds, rel, name, st);
      return;
    }
    bool cloned_base = true, cloned_fork = true;
    // The base is opened to read too: the fork's copy is cloned from it.
    UniqueFd base = MakeCopy(src.get(), fds.base.get(), O_RDWR, o_.base, rel, name, st, clone_to_base_, &cloned_base);
    if (!base.valid()) return;
    if (has_fork() && !MakeCopy(base.get(), fds.fork.get(), O_WRONLY, o_.fork, rel, name, st, clone_to_fork_, &cloned_fork).valid()) return;
    files_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(static_cast<uint64_t>(st.st_size), std::memory_order_relaxed);
    if (st.st_size > 0) (cloned_base && cloned_fork ? reflinked_ : copied_).fetch_add(1, std::memory_order_relaxed);
  }

  // Where blocks cannot be shared (ext4, tmpfs…), a file that fits the buffer is read once and
  // written to the base and to the fork from the same bytes: one read where copying the source
  // to the base and the base to the fork (copy_file_range, a splice each) read it twice. The two
  // copies are the same bytes, so the fork equals its base whatever the source does meanwhile.
  //   openat(base, O_CREAT|O_EXCL), openat(fork, O_CREAT|O_EXCL); pread(src) until EOF, each piece
  //   pwritten to both; then owner, mode and times of each (FinishFile)
  void CopyToBoth(int src, DirFds& fds, const std::string& rel, const std::string& name, const struct stat& st) {
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    UniqueFd base(openat(fds.base.get(), name.c_str(), flags, st.st_mode & 0777));
    if (!base.valid()) {
      Fail(errno, "open", Under(o_.base, rel));
      return;
    }
    UniqueFd fork(openat(fds.fork.get(), name.c_str(), flags, st.st_mode & 0777));
    if (!fork.valid()) {
      Fail(errno, "open", Under(o_.fork, rel));
      return;
    }
    thread_local std::unique_ptr<char[]> buf(new char[kCopyBuffer]);
    off_t off = 0;
    for (;;) {
      ssize_t n = pread(src, buf.get(), kCopyBuffer, off);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        Fail(errno, "read", Under(o_.source, rel));
        return;
      }
      if (n == 0) break;
      struct {
        int fd;
        const std::string* root;
      } outs[2] = {{base.get(), &o_.base}, {fork.get(), &o_.fork}};
      for (const auto& out : outs) {
        for (ssize_t done = 0; done < n;) {
          ssize_t w = pwrite(out.fd, buf.get() + done, static_cast<size_t>(n - done), off + done);
          if (w < 0 && errno == EINTR) continue;
          if (w < 0) {
            Fail(errno, "write", Under(*out.root, rel));
            return;
          }
          done += w;
        }
      }
      off += n;
      // A short read that reaches the size fstat gave is the end: no read more to hear it.
      if (static_cast<size_t>(n) < kCopyBuffer && off >= st.st_size) break;
    }
    if (!FinishFile(base.get(), st, o_.base, rel) || !FinishFile(fork.get(), st, o_.fork, rel)) return;
    files_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(static_cast<uint64_t>(st.st_size), std::memory_order_relaxed);
    copied_.fetch_add(1, std::memory_order_relaxed);
  }

  // Makes `name` in `dir` (of the tree at `root`) a copy of `from`: created with O_EXCL, never
  // through a link, its data cloned (or copied), then its owner, mode and times (FinishFile).
  // Returns the new file's descriptor, or an invalid one once the failure is recorded.
  UniqueFd MakeCopy(int from, int dir, int access, const std::string& root, const std::string& rel, const std::string& name,
                    const struct stat& st, std::atomic<bool>& try_clone, bool* cloned) {
    UniqueFd to(openat(dir, name.c_str(), access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 0777));
    if (!to.valid()) {
      Fail({errno, "open", Under(root, rel)});
      return UniqueFd();
    }
    if (st.st_size > 0) {
      const char* sc = "";
      int err = CopyData(from, to.get(), st, try_clone, cloned, &sc);
      if (err) {
        Fail(err, sc, Under(root, rel));
        return UniqueFd();
      }
    }
    if (!FinishFile(to.get(), st, root, rel)) return UniqueFd();
    return to;
  }

  void CloneSymlink(const DirNode& node, DirFds& fds, const char* name, const struct stat& st) {
    // Recreated as a link with the same target, never followed.
    std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
    for (;;) {
      ssize_t n = readlinkat(fds.src.get(), name, &target[0], target.size());
      if (n < 0) {
        if (errno != ENOENT) Fail({errno, "readlink", Under(o_.source, Join(node.rel, name))});
        return;
      }
      if (static_cast<size_t>(n) < target.size()) {
        target.resize(static_cast<size_t>(n));
        break;
      }
      target.resize(target.size() * 2);  // changed meanwhile: read it again
    }
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    struct {
      int dir;
      const std::string* root;
    } sides[2] = {{fds.base.get(), &o_.base}, {fds.fork.get(), &o_.fork}};
    for (int i = 0; i < (has_fork() ? 2 : 1); i++) {
      if (symlinkat(target.c_str(), sides[i].dir, name) != 0) {
        Fail({errno, "symlink", Under(*sides[i].root, Join(node.rel, name))});
        return;
      }
      if (NeedsOwner(st)) (void)!fchownat(sides[i].dir, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
      if (utimensat(sides[i].dir, name, times, AT_SYMLINK_NOFOLLOW) != 0) {
        Fail({errno, "utimensat", Under(*sides[i].root, Join(node.rel, name))});
        return;
      }
    }
    symlinks_.fetch_add(1, std::memory_order_relaxed);
  }

  void MakeFifo(const DirNode& node, DirFds& fds, const char* name, const struct stat& st) {
    const mode_t mode = st.st_mode & 07777;
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    struct {
      int dir;
      const std::string* root;
    } sides[2] = {{fds.base.get(), &o_.base}, {fds.fork.get(), &o_.fork}};
    for (int i = 0; i < (has_fork() ? 2 : 1); i++) {
      int dir = sides[i].dir;
      if (mkfifoat(dir, name, mode & 0777) != 0) {
        Fail({errno, "mkfifo", Under(*sides[i].root, Join(node.rel, name))});
        return;
      }
      // Its mode and times set through a descriptor, never by path: the name could have been
      // swapped for a link since mkfifoat (see FinishDir). Opening a FIFO to read with
      // O_NONBLOCK does not wait for a writer; O_NOFOLLOW refuses a link.
      const std::string where = Under(*sides[i].root, Join(node.rel, name));
      UniqueFd fifo(openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
      struct stat made;
      if (!fifo.valid() || fstat(fifo.get(), &made) != 0) {
        Fail({errno, "open", where});
        return;
      }
      if (!S_ISFIFO(made.st_mode)) {
        Fail(EEXIST, "mkfifo", where);  // replaced by something else meanwhile
        return;
      }
      if (NeedsOwner(st)) (void)!fchown(fifo.get(), st.st_uid, st.st_gid);
      if (fchmod(fifo.get(), mode) != 0 && fchmod(fifo.get(), mode & 0777) != 0) {
        Fail({errno, "fchmod", where});
        return;
      }
      if (futimens(fifo.get(), times) != 0) {
        Fail({errno, "futimens", where});
        return;
      }
    }
    fifos_.fetch_add(1, std::memory_order_relaxed);
  }

  Options o_;
  std::unordered_set<std::string> skip_, skip_dirs_;
  uid_t euid_;
  gid_t egid_;
  mode_t umask_;
  UniqueFd src_root_, base_root_, fork_root_;
  struct stat root_st_ {};
  dev_t base_dev_ = 0, fork_dev_ = 0;
  ino_t base_ino_ = 0, fork_ino_ = 0;

  std::atomic<bool> clone_to_base_{true}, clone_to_fork_{true}, copy_range_{true}, noatime_{true};
  std::atomic<uint64_t> files_{0}, directories_{0}, symlinks_{0}, fifos_{0}, bytes_{0}, reflinked_{0}, copied_{0};

  std::mutex left_mu_;
  std::vector<LeftOut> left_out_;
};

// --- JavaScript --------------------------------------------------------------------------------

// A path from JavaScript: a string (UTF-8) or a Buffer (any bytes, e.g. from git -z).
std::string BytesOf(const Napi::Value& v, const char* what) {
  if (v.IsBuffer()) {
    auto b = v.As<Napi::Buffer<char>>();
    return std::string(b.Data(), b.Length());
  }
  if (v.IsString()) return v.As<Napi::String>().Utf8Value();
  throw Napi::TypeError::New(v.Env(), std::string("cloneTree: ") + what + " must be a string or a Buffer");
}

class CloneWorker : public CloneWorkerBase {
 public:
  CloneWorker(Napi::Env env, Options options, Napi::Function progress, Napi::Object cancel_holder)
      : CloneWorkerBase(env, progress, cancel_holder), engine_(std::move(options)) {}

 private:
  bool Clone(const Report& report) override { return engine_.Run(report); }

  ErrnoFailure Failure() const override { return engine_.failure(); }

  Napi::Value Result(Napi::Env env) override {
    Totals t = engine_.totals();
    Napi::Object r = Napi::Object::New(env);
    r.Set("files", Napi::Number::New(env, static_cast<double>(t.files)));
    r.Set("directories", Napi::Number::New(env, static_cast<double>(t.directories)));
    r.Set("symlinks", Napi::Number::New(env, static_cast<double>(t.symlinks)));
    r.Set("fifos", Napi::Number::New(env, static_cast<double>(t.fifos)));
    r.Set("bytes", Napi::Number::New(env, static_cast<double>(t.bytes)));
    r.Set("reflinked", Napi::Number::New(env, static_cast<double>(t.reflinked)));
    r.Set("copied", Napi::Number::New(env, static_cast<double>(t.copied)));
    const auto& left = engine_.left_out();
    Napi::Array arr = Napi::Array::New(env, left.size());
    for (size_t i = 0; i < left.size(); i++) {
      Napi::Object o = Napi::Object::New(env);
      o.Set("path", Napi::String::New(env, left[i].path));
      o.Set("pathBytes", Napi::Buffer<char>::Copy(env, left[i].path.data(), left[i].path.size()));
      o.Set("kind", Napi::String::New(env, left[i].kind));
      arr.Set(static_cast<uint32_t>(i), o);
    }
    r.Set("leftOut", arr);
    return r;
  }

  Engine engine_;
};

// cloneTree({source, base, fork?, skip, threads?, cancel?}, onProgress?) -> Promise<result>
Napi::Value CloneTree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "cloneTree: options must be an object");
  Napi::Object opts = info[0].As<Napi::Object>();
  Options o;
  o.source = BytesOf(opts.Get("source"), "source");
  o.base = BytesOf(opts.Get("base"), "base");
  Napi::Value fork = opts.Get("fork");
  if (!fork.IsUndefined() && !fork.IsNull()) o.fork = BytesOf(fork, "fork");
  Napi::Value skip = opts.Get("skip");
  if (skip.IsArray()) {
    Napi::Array a = skip.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) o.skip.push_back(BytesOf(a.Get(i), "skip[]"));
  }
  Napi::Value threads = opts.Get("threads");
  if (threads.IsNumber()) o.threads = static_cast<unsigned>(std::max(1, std::min(64, threads.As<Napi::Number>().Int32Value())));
  Napi::Object cancel_holder;
  Napi::Value cancel = opts.Get("cancel");
  if (cancel.IsTypedArray()) {
    auto ta = cancel.As<Napi::TypedArray>();
    if (ta.TypedArrayType() != napi_int32_array || ta.ElementLength() < 1) {
      throw Napi::TypeError::New(env, "cloneTree: cancel must be an Int32Array");
    }
    o.cancel = cancel.As<Napi::Int32Array>().Data();
    cancel_holder = cancel.As<Napi::Object>();
  }
  Napi::Function progress;
  if (info.Length() > 1 && info[1].IsFunction()) progress = info[1].As<Napi::Function>();
  auto* worker = new CloneWorker(env, std::move(o), progress, cancel_holder);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace

void RegisterCloneTree(Napi::Env env, Napi::Object exports) {
  exports.Set("cloneTree", Napi::Function::New(env, CloneTree, "cloneTree"));
}

}  // namespace arb
