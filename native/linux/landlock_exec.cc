// Placeholder: filled in by the work on this module.
#include "linux/modules.h"

namespace arb {
void RegisterLandlock(Napi::Env env, Napi::Object exports) {}
}  // namespace arb
