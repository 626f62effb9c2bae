// Runs native/darwin/clone_engine.cc on Linux (with fake_clonefile.cc) and prints its result as
// JSON, for test/native/darwin-clone.test.ts.
//   clone_driver SOURCE BASE FORK|- THREADS [SKIP…]
// DRIVER_CANCEL=1 starts with the cancel flag already set.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "darwin/clone_engine.h"

namespace {

std::string Json(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: clone_driver SOURCE BASE FORK|- THREADS [SKIP...]\n");
    return 2;
  }
  arb::DarwinCloneOptions o;
  o.source = argv[1];
  o.base = argv[2];
  if (std::strcmp(argv[3], "-") != 0) o.fork = argv[3];
  o.threads = static_cast<unsigned>(std::atoi(argv[4]));
  for (int i = 5; i < argc; i++) o.skip.push_back(argv[i]);
  int32_t cancel = std::getenv("DRIVER_CANCEL") ? 1 : 0;
  o.cancel = &cancel;
  arb::DarwinCloneTotals t;
  arb::DarwinCloneFailure f;
  if (!arb::DarwinCloneTree(o, nullptr, &t, &f)) {
    std::printf("{\"error\":{\"errno\":%d,\"syscall\":%s,\"path\":%s}}\n", f.err, Json(f.syscall).c_str(), Json(f.path).c_str());
    return 1;
  }
  std::printf(
      "{\"files\":%llu,\"directories\":%llu,\"symlinks\":%llu,\"fifos\":%llu,\"bytes\":%llu,\"reflinked\":%llu,"
      "\"copied\":%llu,\"clonedWhole\":%llu,\"leftOut\":[",
      (unsigned long long)t.files, (unsigned long long)t.directories, (unsigned long long)t.symlinks,
      (unsigned long long)t.fifos, (unsigned long long)t.bytes, (unsigned long long)t.reflinked,
      (unsigned long long)t.copied, (unsigned long long)t.cloned_whole);
  for (size_t i = 0; i < t.left_out.size(); i++) {
    std::printf("%s{\"path\":%s,\"kind\":\"%s\"}", i ? "," : "", Json(t.left_out[i].path).c_str(), t.left_out[i].kind);
  }
  std::printf("]}\n");
  return 0;
}
