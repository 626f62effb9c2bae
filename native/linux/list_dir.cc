// Listing a directory with what lstat says of each entry, in one call: arb diff (and arb fork -l)
// compare two trees by size, mode and time, which took a round trip into JavaScript and a
// fs.Stats (with its four Date objects) per file; for a tree of thousands of files that walk cost
// more than everything else arb diff does.
//
// It also pins down which directory is listed. The tree is a fork a confined command may still be
// changing: a directory the walk saw may have become a link to elsewhere (the home directory)
// by the time it is listed, and a directory above it too, which O_NOFOLLOW alone does not see.
// So the caller says which directory it expects (device and inode, from the listing of its
// parent), and the listing is made from the descriptor opened for it only if it is that one;
// each entry is then stat'ed relative to that descriptor, never through a path. read.ts opens a
// file only if it is the very inode listed here, so nothing outside the tree reaches a patch.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/errno_error.h"
#include "common/unique_fd.h"
#include "linux/modules.h"

namespace arb {
namespace {

struct Entry {
  std::string name;
  struct stat st;
};

// The milliseconds Node gives as mtimeMs (sec * 1e3 + nsec / 1e6), so that the two agree.
double MtimeMs(const struct stat& st) {
  return static_cast<double>(st.st_mtim.tv_sec) * 1e3 + static_cast<double>(st.st_mtim.tv_nsec) / 1e6;
}

// The same for the change time, which no one can set back (touch sets only mtime and atime).
double CtimeMs(const struct stat& st) {
  return static_cast<double>(st.st_ctim.tv_sec) * 1e3 + static_cast<double>(st.st_ctim.tv_nsec) / 1e6;
}

// Owns a DIR* (closing it closes the descriptor it was made from).
class UniqueDir {
 public:
  explicit UniqueDir(DIR* d) : d_(d) {}
  UniqueDir(const UniqueDir&) = delete;
  UniqueDir& operator=(const UniqueDir&) = delete;
  ~UniqueDir() {
    if (d_) closedir(d_);
  }
  DIR* get() const { return d_; }

 private:
  DIR* d_;
};

// listDir(path: Buffer, dev: number, ino: number)
//   -> {same: false}
//    | {same: true, names: string (latin1: one character per byte; each name ended by NUL),
//       mode: Uint32Array,
//       size, mtimeMs, ctimeMs, dev, ino: Float64Array}
//   open(path, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC); fstat: not (dev, ino) -> {same: false};
//   fdopendir; readdir each entry; fstatat(fd, name, AT_SYMLINK_NOFOLLOW).
// An entry removed between readdir and fstatat is left out (as if listed a moment later). Any
// other failure throws {errno, syscall, path}.
Napi::Value ListDir(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsBuffer() || !info[1].IsNumber() || !info[2].IsNumber()) {
    throw Napi::TypeError::New(env, "listDir(path: Buffer, dev: number, ino: number)");
  }
  Napi::Buffer<char> pathBuf = info[0].As<Napi::Buffer<char>>();
  std::string path(pathBuf.Data(), pathBuf.Length());
  if (path.empty() || path.find('\0') != std::string::npos) {
    throw Napi::TypeError::New(env, "listDir: the path is empty or holds a NUL byte");
  }
  double wantDev = info[1].As<Napi::Number>().DoubleValue();
  double wantIno = info[2].As<Napi::Number>().DoubleValue();

  UniqueFd fd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) throw ErrnoError(env, {errno, "open", path});
  struct stat self;
  if (fstat(fd.get(), &self) != 0) throw ErrnoError(env, {errno, "fstat", path});
  Napi::Object result = Napi::Object::New(env);
  if (static_cast<double>(self.st_dev) != wantDev || static_cast<double>(self.st_ino) != wantIno) {
    result.Set("same", Napi::Boolean::New(env, false));
    return result;
  }

  // fdopendir takes the descriptor over; a second one keeps fstatat's dirfd ours to close.
  UniqueFd statFd(fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
  if (!statFd.valid()) throw ErrnoError(env, {errno, "fcntl", path});
  DIR* raw = fdopendir(fd.get());
  if (!raw) throw ErrnoError(env, {errno, "fdopendir", path});
  fd.release();
  UniqueDir dir(raw);

  std::vector<Entry> entries;
  for (;;) {
    errno = 0;
    struct dirent* e = readdir(dir.get());
    if (!e) {
      if (errno != 0) throw ErrnoError(env, {errno, "readdir", path});
      break;
    }
    const char* n = e->d_name;
    if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'))) continue;
    Entry entry;
    entry.name = n;
    if (fstatat(statFd.get(), n, &entry.st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      throw ErrnoError(env, {errno, "fstatat", path + "/" + entry.name});
    }
    entries.push_back(std::move(entry));
  }

  // The names in one string, each ended by a NUL (which no name holds): one string made here
  // and split in JavaScript costs far less than a string and an array store per entry.
  size_t count = entries.size();
  std::string joined;
  for (const Entry& e : entries) {
    joined += e.name;
    joined += '\0';
  }
  napi_value names;
  if (napi_create_string_latin1(env, joined.data(), joined.size(), &names) != napi_ok) {
    throw Napi::Error::New(env, "listDir: cannot make the names string");
  }
  Napi::Uint32Array mode = Napi::Uint32Array::New(env, count);
  Napi::Float64Array size = Napi::Float64Array::New(env, count);
  Napi::Float64Array mtimeMs = Napi::Float64Array::New(env, count);
  Napi::Float64Array ctimeMs = Napi::Float64Array::New(env, count);
  Napi::Float64Array dev = Napi::Float64Array::New(env, count);
  Napi::Float64Array ino = Napi::Float64Array::New(env, count);
  for (size_t i = 0; i < count; i++) {
    const Entry& e = entries[i];
    mode[i] = static_cast<uint32_t>(e.st.st_mode);
    size[i] = static_cast<double>(e.st.st_size);
    mtimeMs[i] = MtimeMs(e.st);
    ctimeMs[i] = CtimeMs(e.st);
    dev[i] = static_cast<double>(e.st.st_dev);
    ino[i] = static_cast<double>(e.st.st_ino);
  }
  result.Set("same", Napi::Boolean::New(env, true));
  result.Set("names", Napi::Value(env, names));
  result.Set("mode", mode);
  result.Set("size", size);
  result.Set("mtimeMs", mtimeMs);
  result.Set("ctimeMs", ctimeMs);
  result.Set("dev", dev);
  result.Set("ino", ino);
  return result;
}

}  // namespace

void RegisterListDir(Napi::Env env, Napi::Object exports) {
  exports.Set("listDir", Napi::Function::New(env, ListDir, "listDir"));
}

}  // namespace arb
