// Names of RcppThread's headers that RcppSpool has no use for of its own,
// kept so that code written for RcppThread compiles unchanged.
#pragma once

#include "abi.h"

#include <thread>

#include "host/main_thread.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! The id of R's main thread (the thread that loaded the code), as
//! RcppThread's `mainThreadID`: `std::this_thread::get_id() == mainThreadID`
//! tells whether R's API may be called here.
RCPPSPOOL_HIDDEN inline const std::thread::id mainThreadID = host::mainThreadId();

//! RcppThread's singleton behind Rcout, Rcerr and interrupt checks. RcppSpool
//! needs no such object; `RMonitor::instance()` exists (and does nothing) so
//! that code calling it to initialise RcppThread on the main thread compiles.
class RMonitor {
public:
    RMonitor(const RMonitor&) = delete;
    RMonitor(RMonitor&&) = delete;
    RMonitor& operator=(const RMonitor&) = delete;
    RMonitor& operator=(RMonitor&&) = delete;
    //! The one instance.
    static RMonitor& instance()
    {
        static RMonitor monitor;
        return monitor;
    }

private:
    RMonitor() = default;
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
