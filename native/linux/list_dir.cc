// Listing directories with what lstat says of each entry, a whole level of the two trees arb diff
// (and arb fork -l) compares in one call, on a few threads, and pairing each directory of the
// base with the same of the fork, so that JavaScript sees only what differs by lstat (and the
// directories, which it enters). src/tree/compare.ts walks one level at a time, asking git in
// between which directories to enter.
//
// Why: a round trip into JavaScript and a fs.Stats per file cost more than everything else arb
// diff does; then one call per directory (thousands, each making its own typed arrays and a
// string per entry) on one thread left the system calls, most of arb diff's time, on one core,
// and JavaScript making and collecting an object per unchanged file. The large bench corpus
// (2 x 52,000 entries in 2 x 2,074 directories) took 530 ms of listing on one thread.
//
// It also pins down which directory is listed. The tree is a fork a confined command may still be
// changing: a directory the walk saw may have become a link to elsewhere (the home directory)
// by the time it is listed, and a directory above it too, which O_NOFOLLOW alone does not see.
// So the caller says which directory it expects (device and inode, from the listing of its
// parent), and the listing is made from the descriptor opened for it only if it is that one;
// each entry is then stat'ed relative to that descriptor, never through a path. read.ts opens a
// file only if it is the very inode listed here, so nothing outside the tree reaches a patch.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "common/errno_error.h"
#include "common/errno_failure.h"
#include "common/unique_fd.h"
#include "linux/dirent64.h"
#include "linux/modules.h"

namespace arb {
namespace {

// Threads at most: listing is system calls on cached metadata, which scale with cores.
constexpr unsigned kMaxThreads = 8;
// getdents64's buffer, per thread: a directory of a few hundred entries in one call.
constexpr size_t kDentsBuffer = 64 * 1024;

// What the walk keeps of an entry's lstat.
struct EntryStat {
  uint32_t mode;
  double size, mtimeMs, ctimeMs, dev, ino;
};

// One directory's listing: its names, each ended by a NUL, and their stats, in readdir's order.
struct DirListing {
  // 0 listed; -1 another directory is there; 1 failed (failure says how).
  int outcome = 0;
  ErrnoFailure failure;
  std::string names;
  std::vector<uint32_t> nameStart;
  std::vector<EntryStat> stats;
  // The entries' indexes in name order, byte by byte (as JavaScript compares latin1 strings).
  std::vector<uint32_t> sorted;

  const char* Name(uint32_t k) const { return names.data() + nameStart[k]; }
};

// The milliseconds Node gives as mtimeMs (sec * 1e3 + nsec / 1e6), so that the two agree.
double MtimeMs(const struct stat& st) {
  return static_cast<double>(st.st_mtim.tv_sec) * 1e3 + static_cast<double>(st.st_mtim.tv_nsec) / 1e6;
}

// The same for the change time, which no one can set back (touch sets only mtime and atime).
double CtimeMs(const struct stat& st) {
  return static_cast<double>(st.st_ctim.tv_sec) * 1e3 + static_cast<double>(st.st_ctim.tv_nsec) / 1e6;
}

bool Fail(DirListing& out, const ErrnoFailure& f) {
  out.outcome = 1;
  out.failure = f;
  return false;
}

// Lists one directory into `out`:
//   open(path, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC); fstat: not (dev, ino) -> outcome -1;
//   getdents64 until it returns 0; fstatat(fd, name, AT_SYMLINK_NOFOLLOW) for each entry.
// getdents64 straight on the descriptor rather than fdopendir/readdir: those add an fstat, two
// fcntl and a second descriptor per directory, as many system calls again as a small directory's
// entries. An entry removed between getdents64 and fstatat is left out (as if listed a moment
// later).
bool ListOne(const char* path, double wantDev, double wantIno, std::vector<char>& buf, DirListing& out) {
  UniqueFd fd(open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return Fail(out, {errno, "open", path});
  struct stat self;
  if (fstat(fd.get(), &self) != 0) return Fail(out, {errno, "fstat", path});
  if (static_cast<double>(self.st_dev) != wantDev || static_cast<double>(self.st_ino) != wantIno) {
    out.outcome = -1;
    return true;
  }
  for (;;) {
    long n = syscall(SYS_getdents64, fd.get(), buf.data(), buf.size());
    if (n < 0) return Fail(out, {errno, "getdents64", path});
    if (n == 0) break;
    for (long at = 0; at < n;) {
      const Dirent64* e = reinterpret_cast<const Dirent64*>(buf.data() + at);
      at += e->d_reclen;
      const char* name = e->d_name;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
      struct stat st;
      if (fstatat(fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        int err = errno;
        if (err == ENOENT) continue;
        return Fail(out, {err, "fstatat", std::string(path) + "/" + name});
      }
      out.nameStart.push_back(static_cast<uint32_t>(out.names.size()));
      out.names.append(name, strlen(name) + 1);
      out.stats.push_back(EntryStat{static_cast<uint32_t>(st.st_mode), static_cast<double>(st.st_size), MtimeMs(st), CtimeMs(st),
                                    static_cast<double>(st.st_dev), static_cast<double>(st.st_ino)});
    }
  }
  out.sorted.resize(out.stats.size());
  for (size_t k = 0; k < out.sorted.size(); k++) out.sorted[k] = static_cast<uint32_t>(k);
  std::sort(out.sorted.begin(), out.sorted.end(), [&out](uint32_t a, uint32_t b) { return strcmp(out.Name(a), out.Name(b)) < 0; });
  return true;
}

// Whether a pair of entries is the same by lstat, so that the walk need not see it: the same
// type and permissions, size and modification time, not a directory (the walk enters those),
// and the fork's not changed since the fork was made (its change time, which touch cannot set
// back, no later than trustedUntilMs). src/tree/list-dir.ts sameByLstat() is the same rule.
bool SameByLstat(const EntryStat& b, const EntryStat& f, double trustedUntilMs) {
  return b.mode == f.mode && !S_ISDIR(b.mode) && f.ctimeMs <= trustedUntilMs && b.size == f.size && b.mtimeMs == f.mtimeMs;
}

// One row of a pair's listing: an entry on one side or both (-1: not on that side).
struct Row {
  int32_t base, fork;
};

// listDirPairs(paths: Buffer, ids: Float64Array, pairs: Int32Array, trustedUntilMs: number)
//   paths: each directory's path ended by a NUL; ids: its device and inode, two numbers each;
//   pairs: two directory indexes per pair, the base's and the fork's (-1: no directory there).
//   -> {outcome: Int32Array (per directory: 0 listed, -1 another directory there, 1 failed),
//       failures: [{dir, errno, syscall, path}],
//       start: Uint32Array (pair p's rows are start[p] to start[p + 1]),
//       names: string (per row, latin1: one character per byte; each name ended by NUL),
//       mode: Uint32Array, size, mtimeMs, ctimeMs, dev, ino: Float64Array (two per row: the
//         base's entry, then the fork's; mode 0 where that side has none),
//       newest: Float64Array (per pair: the newest mtime of the fork's entries, or -Infinity)}
// A pair's rows are the names on either side, in name order (bytewise), but for those
// SameByLstat: of 50,000 files, the walk sees the few that changed and the directories.
// `.gitignore` is always a row (the walk looks for the rules in each directory).
// The directories are shared out among up to kMaxThreads threads (this one included), each
// listing a whole directory at a time (ListOne); this thread waits for the others, then pairs.
Napi::Value ListDirPairs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto isArray = [](const Napi::Value& v, napi_typedarray_type type) {
    return v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == type;
  };
  if (info.Length() < 4 || !info[0].IsBuffer() || !isArray(info[1], napi_float64_array) || !isArray(info[2], napi_int32_array) ||
      !info[3].IsNumber()) {
    throw Napi::TypeError::New(env, "listDirPairs(paths: Buffer, ids: Float64Array, pairs: Int32Array, trustedUntilMs: number)");
  }
  Napi::Buffer<char> pathBuf = info[0].As<Napi::Buffer<char>>();
  Napi::Float64Array ids = info[1].As<Napi::Float64Array>();
  Napi::Int32Array pairArray = info[2].As<Napi::Int32Array>();
  double trustedUntilMs = info[3].As<Napi::Number>().DoubleValue();
  // The paths, copied (JavaScript's memory is not to be read from other threads).
  std::string paths(pathBuf.Data(), pathBuf.Length());
  std::vector<size_t> pathStart;
  for (size_t at = 0; at < paths.size();) {
    size_t end = paths.find('\0', at);
    if (end == std::string::npos || end == at) throw Napi::TypeError::New(env, "listDirPairs: a path is empty or not ended by a NUL");
    pathStart.push_back(at);
    at = end + 1;
  }
  size_t dirs = pathStart.size();
  if (ids.ElementLength() != 2 * dirs) throw Napi::TypeError::New(env, "listDirPairs: ids holds a device and an inode per path");
  std::vector<double> want(ids.Data(), ids.Data() + 2 * dirs);
  size_t pairCount = pairArray.ElementLength() / 2;
  std::vector<int32_t> pairs(pairArray.Data(), pairArray.Data() + 2 * pairCount);
  for (int32_t d : pairs) {
    if (d < -1 || d >= static_cast<int64_t>(dirs)) throw Napi::TypeError::New(env, "listDirPairs: a pair names no directory");
  }

  std::vector<DirListing> listings(dirs);
  std::atomic<size_t> next{0};
  auto work = [&]() {
    std::vector<char> buf(kDentsBuffer);
    for (size_t d; (d = next.fetch_add(1, std::memory_order_relaxed)) < dirs;) {
      ListOne(paths.data() + pathStart[d], want[2 * d], want[2 * d + 1], buf, listings[d]);
    }
  };
  unsigned threads = std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), kMaxThreads, dirs});
  std::vector<std::thread> helpers;
  if (threads > 1) helpers.reserve(threads - 1);
  for (unsigned i = 1; i < threads; i++) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // fewer threads: this one lists what is left
    }
  }
  work();
  for (std::thread& t : helpers) t.join();

  // Pairing: each pair's two sorted listings merged, the rows the walk needs kept.
  static const DirListing kNone;
  auto side = [&](int32_t d) -> const DirListing& { return d >= 0 && listings[d].outcome == 0 ? listings[d] : kNone; };
  std::vector<Row> rows;
  std::vector<uint32_t> rowStart(pairCount + 1);
  std::vector<double> newest(pairCount, -std::numeric_limits<double>::infinity());
  size_t nameBytes = 0;
  for (size_t p = 0; p < pairCount; p++) {
    rowStart[p] = static_cast<uint32_t>(rows.size());
    const DirListing& b = side(pairs[2 * p]);
    const DirListing& f = side(pairs[2 * p + 1]);
    for (const EntryStat& s : f.stats) newest[p] = std::max(newest[p], s.mtimeMs);
    size_t i = 0, j = 0;
    while (i < b.sorted.size() || j < f.sorted.size()) {
      int order = i == b.sorted.size() ? 1 : j == f.sorted.size() ? -1 : strcmp(b.Name(b.sorted[i]), f.Name(f.sorted[j]));
      Row row{order <= 0 ? static_cast<int32_t>(b.sorted[i++]) : -1, order >= 0 ? static_cast<int32_t>(f.sorted[j++]) : -1};
      const char* name = row.base >= 0 ? b.Name(row.base) : f.Name(row.fork);
      if (row.base >= 0 && row.fork >= 0 && SameByLstat(b.stats[row.base], f.stats[row.fork], trustedUntilMs) &&
          strcmp(name, ".gitignore") != 0) {
        continue;
      }
      rows.push_back(row);
      nameBytes += strlen(name) + 1;
    }
  }
  rowStart[pairCount] = static_cast<uint32_t>(rows.size());

  Napi::Int32Array outcome = Napi::Int32Array::New(env, dirs);
  Napi::Array failures = Napi::Array::New(env);
  for (size_t d = 0; d < dirs; d++) {
    outcome[d] = listings[d].outcome;
    if (listings[d].outcome != 1) continue;
    Napi::Error e = ErrnoError(env, listings[d].failure);
    e.Set("dir", Napi::Number::New(env, static_cast<double>(d)));
    failures.Set(failures.Length(), e.Value());
  }
  Napi::Uint32Array start = Napi::Uint32Array::New(env, pairCount + 1);
  Napi::Float64Array newestOut = Napi::Float64Array::New(env, pairCount);
  for (size_t p = 0; p <= pairCount; p++) start[p] = rowStart[p];
  for (size_t p = 0; p < pairCount; p++) newestOut[p] = newest[p];
  size_t n = rows.size();
  Napi::Uint32Array mode = Napi::Uint32Array::New(env, 2 * n);
  Napi::Float64Array size = Napi::Float64Array::New(env, 2 * n);
  Napi::Float64Array mtimeMs = Napi::Float64Array::New(env, 2 * n);
  Napi::Float64Array ctimeMs = Napi::Float64Array::New(env, 2 * n);
  Napi::Float64Array dev = Napi::Float64Array::New(env, 2 * n);
  Napi::Float64Array ino = Napi::Float64Array::New(env, 2 * n);
  std::string joined;
  joined.reserve(nameBytes);
  size_t r = 0;
  for (size_t p = 0; p < pairCount; p++) {
    const DirListing& b = side(pairs[2 * p]);
    const DirListing& f = side(pairs[2 * p + 1]);
    for (; r < rowStart[p + 1]; r++) {
      const Row& row = rows[r];
      const char* name = row.base >= 0 ? b.Name(row.base) : f.Name(row.fork);
      joined.append(name, strlen(name) + 1);
      const EntryStat* sides[2] = {row.base >= 0 ? &b.stats[row.base] : nullptr, row.fork >= 0 ? &f.stats[row.fork] : nullptr};
      for (size_t k = 0; k < 2; k++) {
        const EntryStat* s = sides[k];
        if (!s) continue;  // mode 0: none on this side
        mode[2 * r + k] = s->mode;
        size[2 * r + k] = s->size;
        mtimeMs[2 * r + k] = s->mtimeMs;
        ctimeMs[2 * r + k] = s->ctimeMs;
        dev[2 * r + k] = s->dev;
        ino[2 * r + k] = s->ino;
      }
    }
  }
  napi_value names;
  if (napi_create_string_latin1(env, joined.data(), joined.size(), &names) != napi_ok) {
    throw Napi::Error::New(env, "listDirPairs: cannot make the names string");
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("outcome", outcome);
  result.Set("failures", failures);
  result.Set("start", start);
  result.Set("names", Napi::Value(env, names));
  result.Set("mode", mode);
  result.Set("size", size);
  result.Set("mtimeMs", mtimeMs);
  result.Set("ctimeMs", ctimeMs);
  result.Set("dev", dev);
  result.Set("ino", ino);
  result.Set("newest", newestOut);
  return result;
}

}  // namespace

void RegisterListDir(Napi::Env env, Napi::Object exports) {
  exports.Set("listDirPairs", Napi::Function::New(env, ListDirPairs, "listDirPairs"));
}

}  // namespace arb
