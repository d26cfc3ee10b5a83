// Scheduler's memory: task-sized blocks, and giving back the memory of a burst.
//
// Queues grow with a burst of tasks. At an idle moment, a deque found
// empty goes back to its small reserve buffer and retires the large one:
// a worker's deque when its worker goes to sleep, the outside deque when
// its owner's wait ends (trimOutside()). A retired buffer is not freed at
// once: a thief may still read it, and the next burst reuses it. Once a
// retired buffer has not been reused for kReleaseDelay, the last worker
// to fall asleep frees it, and the injection queue's large buffer if that
// has been empty as long (releaseIdleMemory()). None of it is on the path
// of a push, pop or steal.
#pragma once

#include "../abi.h"

#include <chrono>
#include <cstddef>
#include <mutex>
#include <new>

#include "block_cache.h"
#include "injection_queue.h"
#include "scheduler.h"
#include "work_deque.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

inline void* Scheduler::allocateBlock(std::size_t bytes)
{
    if (Worker* w = workerTls().worker)
        if (void* p = w->blocks.take(bytes)) return p;
    return ::operator new(BlockCache::rounded(bytes));
}

inline void Scheduler::freeBlock(void* p, std::size_t bytes) noexcept
{
    if (Worker* w = workerTls().worker)
        if (w->blocks.give(p, bytes)) return;
    ::operator delete(p);
}

// Why retired deque buffers may be freed then: the thieves are the workers
// and dropQueued(). Every worker is asleep, so none is inside a steal; one
// that wakes takes idle_'s lock after us, so it sees each deque's buffer as
// it was when we took the retired ones (a buffer we take is not in use).
// dropQueued() holds drainMutex_: if it runs, we take nothing (and look
// again soon); if it starts later, it sees the buffers in use as well.
inline std::chrono::nanoseconds Scheduler::releaseIdleMemory(Garbage& g, int asleep)
{
    const auto forever = std::chrono::nanoseconds::max();
    const std::size_t n = numWorkers();
    if (asleep < 0 || static_cast<std::size_t>(asleep) != n) return forever;
    std::unique_lock<std::mutex> noDrain(drainMutex_, std::try_to_lock);
    if (!noDrain) return std::chrono::milliseconds(10);
    const auto delay = releaseDelay();
    const auto now = std::chrono::steady_clock::now();
    const auto cutoff = now - delay;
    auto pending = std::chrono::steady_clock::time_point::max();
    bool took = injection_.releaseIdle(g.ring, cutoff, pending);
    took = outside_.takeRetired(g.buffers, cutoff, pending) || took;
    for (std::size_t i = 0; i < n; ++i) took = workers_[i]->deque.takeRetired(g.buffers, cutoff, pending) || took;
    if (took) return std::chrono::nanoseconds::zero();
    if (pending == std::chrono::steady_clock::time_point::max()) return forever;
    return std::chrono::duration_cast<std::chrono::nanoseconds>(pending + delay - now) +
           std::chrono::milliseconds(1);
}

inline void Scheduler::trimOutside()
{
    if (!isOutsideOwner() || forked() || !outside_.shrink()) return;
    idle_.notifyOne();
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
