// Waking a sleeping thread off the core of a waker that keeps running.
//
// Why: Linux (seen on 6.18 with EEVDF, 2 vCPUs) puts a thread woken by a
// busy one on the waker's core, not on the idle one, and runs it there only
// when the waker blocks. A loop's caller that wakes a worker and goes on
// computing then runs the whole loop alone while the other core idles: in a
// 2.4 ms loop over matrix rows the invited worker ran its first row after
// 500 us, or never, in 85-96 of 100 loops (cpp/bench/bench_wake_placement.cpp). The
// same wake-up with the sleeper's CPU set narrowed to exclude the waker's
// core lands on the idle core in tens of microseconds; the sleeper puts its
// CPU set back as soon as it is up. RcppThread pins its workers to cores
// for this; we do not pin (other processes, forks and R sessions share the
// cores), we only say where a wake-up should not go.
//
// Only where the kernel lets a thread set another's CPU set (Linux); a
// no-op elsewhere, and whenever the sleeper may run on one CPU only or the
// waker's core is not among its CPUs (then nothing is changed).
#pragma once

#include "../abi.h"

#include <atomic>

#if defined(__linux__) && defined(_GNU_SOURCE)
#define RCPPSPOOL_WAKE_STEERING 1
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! Whether wake-ups are steered at all (on by default; a switch for
//! benchmarks that compare with the kernel's own choice, and for tests).
inline std::atomic<bool>& wakeSteeringEnabled() noexcept
{
    static std::atomic<bool> on{true};
    return on;
}

//! Who wakes a sleeper for work, and so where the sleeper should run.
enum class Waker {
    staysBusy,  //!< goes on running (a submitter, a worker about to run a task): steer the sleeper off its core
    leaves,     //!< is about to sleep or leave (its core frees up): let the kernel choose
};

//! One sleep's steering: created by the sleeping thread (it records its
//! thread id), used by at most one waker while the sleeper is listed (under
//! the list's lock), undone by the sleeper once it has left every list.
class WakeSteering {
public:
    WakeSteering() noexcept
    {
#ifdef RCPPSPOOL_WAKE_STEERING
        // Not cached per thread: a forked child's thread has a new id.
        tid_ = static_cast<pid_t>(::syscall(SYS_gettid));
#endif
    }
    ~WakeSteering() { restore(); }
    WakeSteering(const WakeSteering&) = delete;
    WakeSteering& operator=(const WakeSteering&) = delete;

    //! By the waker, before its signal: keeps the sleeper off the core the
    //! waker runs on, if the sleeper may run elsewhere. Returns true if it
    //! changed the sleeper's CPU set.
    bool steerOffCallersCore() noexcept
    {
#ifdef RCPPSPOOL_WAKE_STEERING
        if (narrowed_ || tid_ <= 0 || !wakeSteeringEnabled().load(std::memory_order_relaxed)) return false;
        const int here = ::sched_getcpu();
        if (here < 0 || here >= CPU_SETSIZE) return false;
        if (::sched_getaffinity(tid_, sizeof saved_, &saved_) != 0) return false;
        if (!CPU_ISSET(here, &saved_) || CPU_COUNT(&saved_) < 2) return false;
        cpu_set_t elsewhere = saved_;
        CPU_CLR(here, &elsewhere);
        narrowed_ = ::sched_setaffinity(tid_, sizeof elsewhere, &elsewhere) == 0;
        return narrowed_;
#else
        return false;
#endif
    }

    //! By the sleeper, once no waker can touch this any more (it left every
    //! list): its own CPU set back as it was.
    void restore() noexcept
    {
#ifdef RCPPSPOOL_WAKE_STEERING
        if (!narrowed_) return;
        narrowed_ = false;
        ::sched_setaffinity(0, sizeof saved_, &saved_);
#endif
    }

    //! The sleeper's CPU set was narrowed by its waker (tests).
    bool narrowed() const noexcept
    {
#ifdef RCPPSPOOL_WAKE_STEERING
        return narrowed_;
#else
        return false;
#endif
    }

private:
#ifdef RCPPSPOOL_WAKE_STEERING
    pid_t tid_ = 0;
    bool narrowed_ = false;
    cpu_set_t saved_;
#endif
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
