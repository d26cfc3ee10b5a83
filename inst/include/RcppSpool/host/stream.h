// The host's two text streams (R's console: Rprintf and REprintf).
#pragma once

#include "../abi.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {

enum class Stream { out, err };

}  // namespace host
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
