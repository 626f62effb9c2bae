// A stand-in for macOS's clonefileat(2), for running native/darwin/clone_engine.cc on Linux.
// It copies where APFS would share blocks, and otherwise behaves as xnu's clonefile_internal
// does in what the engine relies on:
//   - flags other than CLONE_NOFOLLOW|CLONE_NOOWNERCOPY|CLONE_ACL: EINVAL
//   - a source that is not a regular file, link or directory (a FIFO, socket or device on its
//     own): EINVAL
//   - a destination that exists: EEXIST (links are not followed with CLONE_NOFOLLOW)
//   - a directory is cloned with everything in it, FIFOs and sockets included
//   - set-user-ID and set-group-ID bits of regular files are cleared; the owner is copied only
//     for root without CLONE_NOOWNERCOPY
// And, for the tests: every call is logged (FAKE_CLONEFILE_LOG, one line: flags, type, source
// path relative to FAKE_CLONEFILE_ROOT), and FAKE_CLONEFILE chooses a failure: "enotsup"
// (a volume without clones), "nodirs" (directories refused with EINVAL, as a mount point is),
// "eio" (every call fails with EIO).
#include <dirent.h>
#include <fcntl.h>
#include <sys/clonefile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::string PathOf(int dirfd, const char* name) {
  char link[64], buf[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
  ssize_t n = readlink(link, buf, sizeof buf - 1);
  std::string dir = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
  return dir + "/" + name;
}

void Log(uint32_t flags, const struct stat& st, const std::string& path) {
  const char* file = std::getenv("FAKE_CLONEFILE_LOG");
  if (!file) return;
  const char* root = std::getenv("FAKE_CLONEFILE_ROOT");
  std::string rel = path;
  if (root && rel.compare(0, std::strlen(root), root) == 0) rel = rel.substr(std::strlen(root));
  const char* type = S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "link" : S_ISREG(st.st_mode) ? "file" : "other";
  if (FILE* f = std::fopen(file, "a")) {
    std::fprintf(f, "%u\t%s\t%s\n", flags, type, rel.c_str());
    std::fclose(f);
  }
}

bool CopyTimes(int dirfd, const char* name, const struct stat& st) {
  const struct timespec t[2] = {st.st_atim, st.st_mtim};
  return utimensat(dirfd, name, t, AT_SYMLINK_NOFOLLOW) == 0;
}

bool Copy(int sdir, const char* sname, int ddir, const char* dname, const struct stat& st, bool own);

bool CopyDir(int sdir, const char* sname, int ddir, const char* dname, const struct stat& st, bool own) {
  if (mkdirat(ddir, dname, 0700) != 0) return false;
  int s = openat(sdir, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int d = openat(ddir, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (s < 0 || d < 0) return false;
  DIR* dir = fdopendir(dup(s));
  bool ok = dir != nullptr;
  while (ok) {
    struct dirent* e = readdir(dir);
    if (!e) break;
    if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
    struct stat cst;
    if (fstatat(s, e->d_name, &cst, AT_SYMLINK_NOFOLLOW) != 0) { ok = false; break; }
    ok = Copy(s, e->d_name, d, e->d_name, cst, own);
  }
  if (dir) closedir(dir);
  if (ok && own) ok = fchownat(ddir, dname, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) == 0;
  if (ok) ok = fchmod(d, st.st_mode & 07777) == 0;
  close(s);
  close(d);
  return ok && CopyTimes(ddir, dname, st);
}

bool Copy(int sdir, const char* sname, int ddir, const char* dname, const struct stat& st, bool own) {
  switch (st.st_mode & S_IFMT) {
    case S_IFDIR:
      return CopyDir(sdir, sname, ddir, dname, st, own);
    case S_IFLNK: {
      std::vector<char> target(4096);
      ssize_t n = readlinkat(sdir, sname, target.data(), target.size() - 1);
      if (n < 0) return false;
      target[static_cast<size_t>(n)] = 0;
      if (symlinkat(target.data(), ddir, dname) != 0) return false;
      if (own && fchownat(ddir, dname, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) != 0) return false;
      return CopyTimes(ddir, dname, st);
    }
    case S_IFREG: {
      int in = openat(sdir, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (in < 0) return false;
      int out = openat(ddir, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (out < 0) { close(in); return false; }
      char buf[65536];
      ssize_t n;
      bool ok = true;
      while ((n = read(in, buf, sizeof buf)) > 0) ok = ok && write(out, buf, static_cast<size_t>(n)) == n;
      if (n < 0) ok = false;
      if (ok && own) ok = fchown(out, st.st_uid, st.st_gid) == 0;
      if (ok) ok = fchmod(out, st.st_mode & 01777) == 0;  // set-user-ID and set-group-ID cleared
      close(in);
      close(out);
      return ok && CopyTimes(ddir, dname, st);
    }
    case S_IFIFO:
    case S_IFSOCK:  // inside a directory, taken along
      if (mknodat(ddir, dname, st.st_mode, 0) != 0) return false;
      if (own && fchownat(ddir, dname, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) != 0) return false;
      return fchmodat(ddir, dname, st.st_mode & 07777, 0) == 0 && CopyTimes(ddir, dname, st);
    default:
      errno = EPERM;  // a device node: not what a user's tree holds, and not made here
      return false;
  }
}

}  // namespace

extern "C" int clonefileat(int src_dirfd, const char* src, int dst_dirfd, const char* dst, uint32_t flags) {
  if (flags & ~static_cast<uint32_t>(CLONE_NOFOLLOW | CLONE_NOOWNERCOPY | CLONE_ACL)) {
    errno = EINVAL;
    return -1;
  }
  struct stat st;
  if (fstatat(src_dirfd, src, &st, (flags & CLONE_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0) != 0) return -1;
  Log(flags, st, PathOf(src_dirfd, src));
  const char* mode = std::getenv("FAKE_CLONEFILE");
  std::string fail = mode ? mode : "";
  if (fail == "enotsup") {
    errno = ENOTSUP;
    return -1;
  }
  if (fail == "eio") {
    errno = EIO;
    return -1;
  }
  if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode) && !S_ISDIR(st.st_mode)) {
    errno = EINVAL;
    return -1;
  }
  if (S_ISDIR(st.st_mode) && fail == "nodirs") {
    errno = EINVAL;
    return -1;
  }
  struct stat dst_st;
  if (fstatat(dst_dirfd, dst, &dst_st, AT_SYMLINK_NOFOLLOW) == 0) {
    errno = EEXIST;
    return -1;
  }
  const bool own = geteuid() == 0 && !(flags & CLONE_NOOWNERCOPY);
  if (!Copy(src_dirfd, src, dst_dirfd, dst, st, own)) {
    if (errno == 0) errno = EIO;
    return -1;
  }
  return 0;
}
