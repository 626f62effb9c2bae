// Placeholder: filled in by the work on the broker (issue 7).
#include "posix/posix.h"

namespace arb {
void RegisterFdPassing(Napi::Env env, Napi::Object exports) {}
}  // namespace arb
