// Which thread is the host's main thread (R's, in R).
#pragma once

#include "../abi.h"

#include <thread>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {

//! The id of the thread that loaded this code. Static initialisers of a
//! shared object run in the thread that loads it, and R loads packages (and
//! sourceCpp() modules) on its main thread, so this is R's main thread.
RCPPSPOOL_HIDDEN inline std::thread::id mainThreadId() noexcept
{
    static const std::thread::id id = std::this_thread::get_id();
    return id;
}

namespace detail {
// Forces mainThreadId() to be captured at load time, not at first use
// (which might happen on a worker).
RCPPSPOOL_HIDDEN inline const std::thread::id capturedAtLoad = mainThreadId();
}  // namespace detail

inline bool isMainThread() noexcept { return std::this_thread::get_id() == mainThreadId(); }

}  // namespace host
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
