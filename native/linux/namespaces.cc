// Placeholder: filled in by the work on confine's hardening (issue 6).
#include "linux/layers.h"
#include "linux/modules.h"

namespace arb {
bool EnterNamespaces(const NamespacePlan& plan, ErrnoFailure* failure) {
  if (!plan.enabled) return true;
  failure->err = ENOSYS;
  failure->syscall = "unshare";
  return false;
}
void RegisterNamespaces(Napi::Env env, Napi::Object exports) {}
}  // namespace arb
