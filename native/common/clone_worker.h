#pragma once
// The JavaScript side of cloneTree that Linux and macOS share (linux/clone_tree.cc,
// darwin/clone_tree.cc): the clone runs off the main thread (AsyncWorker), reports totals now
// and then through a thread-safe function, and settles a Promise with the result or the
// first failure as facts (common/errno_error.h). Each side derives, runs its own engine in
// Clone and builds its own result object in Result.
#include <napi.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "common/errno_error.h"

namespace arb {

class CloneWorkerBase : public Napi::AsyncWorker {
 public:
  using Report = std::function<void(uint64_t files, uint64_t bytes)>;

  // progress: called with (files, bytes) on the main thread, or empty for none. cancel_holder:
  // the Int32Array whose memory the engine reads as its cancel flag, or empty for none.
  CloneWorkerBase(Napi::Env env, Napi::Function progress, Napi::Object cancel_holder)
      : Napi::AsyncWorker(env, "arb:cloneTree"), deferred_(Napi::Promise::Deferred::New(env)) {
    if (!progress.IsEmpty()) {
      tsfn_ = Napi::ThreadSafeFunction::New(env, progress, "arb:cloneTree:progress", 0, 1);
      has_tsfn_ = true;
    }
    if (!cancel_holder.IsEmpty()) cancel_ref_ = Napi::Persistent(cancel_holder);
  }

  Napi::Promise Promise() { return deferred_.Promise(); }

 protected:
  // Runs the clone on this worker thread, calling report (empty if there is no progress
  // callback) now and then; false if it failed, with Failure() saying how.
  virtual bool Clone(const Report& report) = 0;
  virtual ErrnoFailure Failure() const = 0;
  // The result the Promise resolves to, on the main thread.
  virtual Napi::Value Result(Napi::Env env) = 0;

 private:
  struct Progress {
    uint64_t files, bytes;
  };

  void Execute() override {
    Report report;
    if (has_tsfn_) {
      report = [this](uint64_t files, uint64_t bytes) {
        auto* p = new Progress{files, bytes};
        napi_status s = tsfn_.NonBlockingCall(p, [](Napi::Env env, Napi::Function cb, Progress* data) {
          std::unique_ptr<Progress> owned(data);
          if (env != nullptr && !cb.IsEmpty()) {
            cb.Call({Napi::Number::New(env, static_cast<double>(owned->files)),
                     Napi::Number::New(env, static_cast<double>(owned->bytes))});
          }
        });
        if (s != napi_ok) delete p;  // queue full or closing: this report is simply skipped
      };
    }
    bool ok = Clone(report);
    if (has_tsfn_) tsfn_.Release();
    if (!ok) SetError("cloneTree failed");
  }

  void OnOK() override { deferred_.Resolve(Result(Env())); }

  void OnError(const Napi::Error&) override { deferred_.Reject(ErrnoError(Env(), Failure()).Value()); }

  Napi::Promise::Deferred deferred_;
  Napi::ThreadSafeFunction tsfn_;
  bool has_tsfn_ = false;
  Napi::ObjectReference cancel_ref_;  // keeps the cancel flag's memory alive while threads read it
};

}  // namespace arb
