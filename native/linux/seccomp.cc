// Placeholder: filled in by the work on confine's hardening (issue 6).
#include "linux/layers.h"

namespace arb {
bool ApplySeccomp(const SeccompPlan& plan, ErrnoFailure* failure) {
  if (!plan.denyTerminalInjection && !plan.denyNetwork) return true;
  failure->err = ENOSYS;
  failure->syscall = "seccomp";
  return false;
}
}  // namespace arb
