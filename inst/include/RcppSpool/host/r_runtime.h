// Whether the RcppSpool package's namespace is loaded: where a client in R
// may ask it for its runtime's table (client/api.h) while R loads the
// client's shared object.
#pragma once

#include "../abi.h"

#include "r_api.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {
namespace runtime_detail {

//! Is RcppSpool's namespace loaded? Then asking for its C-callable is a
//! plain lookup, which R allows while it loads a shared object.
inline bool namespaceLoaded()
{
    return Rf_findVarInFrame(R_NamespaceRegistry, Rf_install("RcppSpool")) != R_UnboundValue;
}

}  // namespace runtime_detail
}  // namespace host
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
