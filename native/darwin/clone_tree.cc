// cloneTree on macOS: the same JavaScript interface as the Linux engine (src/native.ts,
// CloneTreeOptions -> Promise<CloneResult>), over darwin/clone_engine.cc, which runs off the
// main thread (AsyncWorker) and reports totals now and then through a thread-safe function.
// Also clonefile(src, dst): one clonefile(2) call, for tests and tools on a Mac.
//
//   cloneTree({source, base, fork?, skip, threads?, cancel?}, onProgress?) -> Promise<result>
//     result: {files, directories, symlinks, fifos, bytes, reflinked, copied, clonedWhole,
//              leftOut: [{path, pathBytes, kind}]}
//     rejects with {errno, syscall, path} (common/errno_error.h) on the first failure
//   clonefile(src, dst) -> undefined
//     clonefile(src, dst, CLONE_NOFOLLOW); throws {errno, syscall: 'clonefile', path: src}
#include <sys/clonefile.h>

#include <algorithm>
#include <string>
#include <utility>

#include "common/clone_worker.h"
#include "common/errno_error.h"
#include "darwin/clone_engine.h"
#include "darwin/modules.h"

namespace arb {
namespace {

// A path from JavaScript: a string (UTF-8) or a Buffer (any bytes, e.g. from git -z). A NUL
// would cut the path short in every system call, so it is refused.
std::string BytesOf(const Napi::Value& v, const char* fn, const char* what) {
  std::string s;
  if (v.IsBuffer()) {
    auto b = v.As<Napi::Buffer<char>>();
    s.assign(b.Data(), b.Length());
  } else if (v.IsString()) {
    s = v.As<Napi::String>().Utf8Value();
  } else {
    throw Napi::TypeError::New(v.Env(), std::string(fn) + ": " + what + " must be a string or a Buffer");
  }
  if (s.find('\0') != std::string::npos) {
    throw Napi::TypeError::New(v.Env(), std::string(fn) + ": " + what + " contains a NUL byte");
  }
  return s;
}

class CloneWorker : public CloneWorkerBase {
 public:
  CloneWorker(Napi::Env env, DarwinCloneOptions options, Napi::Function progress, Napi::Object cancel_holder)
      : CloneWorkerBase(env, progress, cancel_holder), options_(std::move(options)) {}

 private:
  bool Clone(const Report& report) override { return DarwinCloneTree(options_, report, &totals_, &failure_); }

  ErrnoFailure Failure() const override { return ErrnoFailure{failure_.err, failure_.syscall, failure_.path}; }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object r = Napi::Object::New(env);
    auto number = [&env](uint64_t n) { return Napi::Number::New(env, static_cast<double>(n)); };
    r.Set("files", number(totals_.files));
    r.Set("directories", number(totals_.directories));
    r.Set("symlinks", number(totals_.symlinks));
    r.Set("fifos", number(totals_.fifos));
    r.Set("bytes", number(totals_.bytes));
    r.Set("reflinked", number(totals_.reflinked));
    r.Set("copied", number(totals_.copied));
    r.Set("clonedWhole", number(totals_.cloned_whole));
    Napi::Array left = Napi::Array::New(env, totals_.left_out.size());
    for (size_t i = 0; i < totals_.left_out.size(); i++) {
      const DarwinLeftOut& l = totals_.left_out[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("path", Napi::String::New(env, l.path));
      o.Set("pathBytes", Napi::Buffer<char>::Copy(env, l.path.data(), l.path.size()));
      o.Set("kind", Napi::String::New(env, l.kind));
      left.Set(static_cast<uint32_t>(i), o);
    }
    r.Set("leftOut", left);
    return r;
  }

  DarwinCloneOptions options_;
  DarwinCloneTotals totals_;
  DarwinCloneFailure failure_;
};

Napi::Value CloneTree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "cloneTree: options must be an object");
  Napi::Object opts = info[0].As<Napi::Object>();
  DarwinCloneOptions o;
  o.source = BytesOf(opts.Get("source"), "cloneTree", "source");
  o.base = BytesOf(opts.Get("base"), "cloneTree", "base");
  Napi::Value fork = opts.Get("fork");
  if (!fork.IsUndefined() && !fork.IsNull()) o.fork = BytesOf(fork, "cloneTree", "fork");
  Napi::Value skip = opts.Get("skip");
  if (!skip.IsUndefined() && !skip.IsArray()) throw Napi::TypeError::New(env, "cloneTree: skip must be an array");
  if (skip.IsArray()) {
    Napi::Array a = skip.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) o.skip.push_back(BytesOf(a.Get(i), "cloneTree", "skip[]"));
  }
  Napi::Value threads = opts.Get("threads");
  if (threads.IsNumber()) o.threads = static_cast<unsigned>(std::max(1, std::min(64, threads.As<Napi::Number>().Int32Value())));
  Napi::Object cancel_holder;
  Napi::Value cancel = opts.Get("cancel");
  if (!cancel.IsUndefined() && !cancel.IsNull()) {
    if (!cancel.IsTypedArray() || cancel.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array ||
        cancel.As<Napi::TypedArray>().ElementLength() < 1) {
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

// clonefile(src, dst): one call, on the main thread (a single file or a tree the caller chose to
// clone in one go). CLONE_NOFOLLOW for the reasons in clone_engine.cc.
Napi::Value Clonefile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2) throw Napi::TypeError::New(env, "clonefile: expects (src, dst)");
  std::string src = BytesOf(info[0], "clonefile", "src");
  std::string dst = BytesOf(info[1], "clonefile", "dst");
  if (clonefile(src.c_str(), dst.c_str(), CLONE_NOFOLLOW) != 0) {
    int err = errno;
    throw ErrnoError(env, err, "clonefile", src);
  }
  return env.Undefined();
}

}  // namespace

void RegisterCloneTree(Napi::Env env, Napi::Object exports) {
  exports.Set("cloneTree", Napi::Function::New(env, CloneTree, "cloneTree"));
  exports.Set("clonefile", Napi::Function::New(env, Clonefile, "clonefile"));
}

}  // namespace arb
