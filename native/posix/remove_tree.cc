// Removing a fork or a base: a tree a process left running there may still be changing. Removal
// by path (`rm` of a/b/c, then a/b) can be turned: a process that swaps a/b for a link to the
// home directory between the listing of a/b and the unlink of a/b/c has the unlink follow the link
// and remove a file outside the tree. So the tree is walked by descriptors, as the clone engine
// walks a source: each directory opened relative to its parent's descriptor without following a
// link (O_NOFOLLOW|O_DIRECTORY), checked to be on the tree's file system (fstat), and each entry
// unlinked relative to that descriptor. What the descriptor names stays the directory that was
// opened whatever is renamed or swapped meanwhile: a link put in place of an entry is removed as
// a link, never followed. Nothing here is Linux-only (openat, unlinkat, fchmodat, fdopendir):
// built on Linux and macOS alike.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "common/errno_error.h"
#include "common/unique_fd.h"
#include "posix/posix.h"

namespace arb {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// An entry that keeps coming back (a process still writing there) is tried this many times.
constexpr int kAttempts = 8;

struct Walk {
  dev_t dev;
  ErrnoFailure first;
  void Fail(int err, const char* call, const std::string& path) {
    if (first.err == 0) first = ErrnoFailure{err, call, path};
  }
};

std::string Join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

// The names in the directory `fd` (its own descriptor is kept; a duplicate is read).
bool Names(int fd, std::vector<std::string>* out, Walk* walk, const std::string& rel) {
  int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) {
    walk->Fail(errno, "fcntl", rel);
    return false;
  }
  DIR* d = fdopendir(dup);
  if (!d) {
    walk->Fail(errno, "fdopendir", rel);
    close(dup);
    return false;
  }
  rewinddir(d);
  for (;;) {
    errno = 0;
    struct dirent* e = readdir(d);
    if (!e) {
      if (errno != 0) walk->Fail(errno, "readdir", rel);
      break;
    }
    const char* n = e->d_name;
    if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'))) continue;
    out->push_back(n);
  }
  closedir(d);
  return true;
}

// Opens the directory `name` in `parent`, never through a link; one without read or search
// permission (kept from the source) is given rwx for its owner first, by a call that does not
// follow a link either. -1 with errno otherwise.
int OpenDirAt(int parent, const char* name) {
  int fd = openat(parent, name, kDirFlags);
  if (fd < 0 && errno == EACCES && fchmodat(parent, name, 0700, AT_SYMLINK_NOFOLLOW) == 0) fd = openat(parent, name, kDirFlags);
  return fd;
}

void Empty(int fd, const std::string& rel, Walk* walk);

// Removes `name` from the directory `parent`, whatever it is; a directory after emptying it.
void RemoveAt(int parent, const std::string& name, const std::string& rel, Walk* walk) {
  for (int attempt = 0; attempt < kAttempts; attempt++) {
    if (unlinkat(parent, name.c_str(), 0) == 0 || errno == ENOENT) return;
    int err = errno;
    if (err == EACCES) {
      // The parent has no write permission: its owner may give it.
      if (fchmod(parent, 0700) == 0) continue;
      walk->Fail(err, "unlinkat", rel);
      return;
    }
    // Linux says EISDIR for a directory, macOS EPERM.
    if (err != EISDIR && err != EPERM) {
      walk->Fail(err, "unlinkat", rel);
      return;
    }
    UniqueFd child(OpenDirAt(parent, name.c_str()));
    if (!child.valid()) {
      if (err == EPERM && errno == ENOTDIR) {
        // Not a directory that macOS refused: a file that may not be removed.
        walk->Fail(err, "unlinkat", rel);
        return;
      }
      // A link or a file in its place since: unlinked on the next turn.
      if (errno == ELOOP || errno == ENOTDIR || errno == ENOENT) continue;
      walk->Fail(errno, "openat", rel);
      return;
    }
    struct stat st;
    if (fstat(child.get(), &st) != 0) {
      walk->Fail(errno, "fstat", rel);
      return;
    }
    if (st.st_dev != walk->dev) {
      // Another file system mounted there: not crossed into, and left.
      walk->Fail(EXDEV, "openat", rel);
      return;
    }
    Empty(child.get(), rel, walk);
    child.reset();
    if (unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) return;
    // ENOTEMPTY: something was made there meanwhile; ENOTDIR: swapped for a file. Again.
    if (errno != ENOTEMPTY && errno != EEXIST && errno != ENOTDIR) {
      walk->Fail(errno, "unlinkat", rel);
      return;
    }
  }
  walk->Fail(ENOTEMPTY, "unlinkat", rel);
}

void Empty(int fd, const std::string& rel, Walk* walk) {
  std::vector<std::string> names;
  if (!Names(fd, &names, walk, rel)) return;
  for (const std::string& name : names) RemoveAt(fd, name, Join(rel, name), walk);
}

// removeTree(parent: Buffer, name: Buffer, dev: number, ino: number)
//   -> 'removed' | 'gone' | 'not-directory' | 'other'
//   open(parent, O_RDONLY|O_DIRECTORY|O_CLOEXEC) (the directory the user's fork is in: followed);
//   openat(parent, name, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC); fstat: a dev/ino given
//   (>= 0) and not this one -> 'other', nothing removed; then for each directory, from its
//   descriptor: fdopendir(dup) + readdir, unlinkat(fd, entry, 0), and for a directory
//   openat(fd, entry, O_NOFOLLOW|O_DIRECTORY) + fstat (same st_dev as the root, else EXDEV and
//   left) + the same inside + unlinkat(fd, entry, AT_REMOVEDIR); a directory without write (or
//   read) permission is given 0700 by fchmod(fd) (or fchmodat(AT_SYMLINK_NOFOLLOW)) first; last
//   unlinkat(parent, name, AT_REMOVEDIR). Removes all it can, then throws the first failure
//   {errno, syscall, path (relative to the root)}.
Napi::Value RemoveTree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsBuffer() || !info[1].IsBuffer() || !info[2].IsNumber() || !info[3].IsNumber()) {
    throw Napi::TypeError::New(env, "removeTree(parent: Buffer, name: Buffer, dev: number, ino: number)");
  }
  auto str = [](const Napi::Value& v) {
    Napi::Buffer<char> b = v.As<Napi::Buffer<char>>();
    return std::string(b.Data(), b.Length());
  };
  std::string parentPath = str(info[0]);
  std::string name = str(info[1]);
  if (parentPath.empty() || parentPath.find('\0') != std::string::npos || name.empty() || name.find('\0') != std::string::npos ||
      name.find('/') != std::string::npos || name == "." || name == "..") {
    throw Napi::TypeError::New(env, "removeTree: a parent and one name, with no NUL, '/', '.' or '..'");
  }
  double wantDev = info[2].As<Napi::Number>().DoubleValue();
  double wantIno = info[3].As<Napi::Number>().DoubleValue();

  UniqueFd parent(open(parentPath.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent.valid()) throw ErrnoError(env, errno, "open", parentPath);
  UniqueFd root(OpenDirAt(parent.get(), name.c_str()));
  if (!root.valid()) {
    if (errno == ENOENT) return Napi::String::New(env, "gone");
    if (errno == ELOOP || errno == ENOTDIR) return Napi::String::New(env, "not-directory");
    throw ErrnoError(env, errno, "openat", name);
  }
  struct stat st;
  if (fstat(root.get(), &st) != 0) throw ErrnoError(env, errno, "fstat", name);
  if (wantDev >= 0 && (static_cast<double>(st.st_dev) != wantDev || static_cast<double>(st.st_ino) != wantIno)) {
    return Napi::String::New(env, "other");
  }
  Walk walk{st.st_dev, {}};
  for (int attempt = 0; attempt < kAttempts; attempt++) {
    Empty(root.get(), "", &walk);
    if (walk.first.err != 0) break;
    if (unlinkat(parent.get(), name.c_str(), AT_REMOVEDIR) == 0) return Napi::String::New(env, "removed");
    if (errno != ENOTEMPTY && errno != EEXIST) {
      walk.Fail(errno, "unlinkat", name);
      break;
    }
  }
  if (walk.first.err == 0) walk.Fail(ENOTEMPTY, "unlinkat", name);
  if (!walk.first.path.empty() && walk.first.path != name) walk.first.path = name + "/" + walk.first.path;
  throw ErrnoError(env, walk.first);
}

}  // namespace

void RegisterRemoveTree(Napi::Env env, Napi::Object exports) { exports.Set("removeTree", Napi::Function::New(env, RemoveTree)); }

}  // namespace arb
