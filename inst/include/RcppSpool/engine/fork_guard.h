// Detecting that we run in a child created by fork().
#pragma once

#include "../abi.h"

#include <atomic>

#include "runtime.h"
#if !defined(_WIN32)
#include <pthread.h>
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! Increases in a child process after every fork(). A pool remembers the
//! generation it was made in; in a later one its worker threads do not exist
//! (fork copies only the calling thread), so it must not wait for them.
RCPPSPOOL_HIDDEN inline std::atomic<unsigned>& forkGenerationCounter() noexcept
{
    static std::atomic<unsigned>* const gen = runtime::state<std::atomic<unsigned>, runtime::Slot::forkGeneration>();
    return *gen;
}

namespace detail {
inline void onForkChild() noexcept { forkGenerationCounter().fetch_add(1, std::memory_order_relaxed); }
inline bool registerForkHandler() noexcept
{
#if !defined(_WIN32)
    pthread_atfork(nullptr, nullptr, &onForkChild);
#endif
    return true;
}
}  // namespace detail

//! Registers the fork handler (once per shared object; cheap afterwards).
//! Called when a pool is made and when the package is loaded.
RCPPSPOOL_HIDDEN inline void watchForks() noexcept
{
    static const bool registered = detail::registerForkHandler();
    (void)registered;
}

//! The current fork generation. Registers the handler on first use; the
//! check on the hot path is then one relaxed load.
inline unsigned forkGeneration() noexcept
{
    watchForks();
    return forkGenerationCounter().load(std::memory_order_relaxed);
}

//! The generation without registering (for hot paths of objects that
//! registered when they were made).
inline unsigned currentForkGeneration() noexcept
{
    return forkGenerationCounter().load(std::memory_order_relaxed);
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
