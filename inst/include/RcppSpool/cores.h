// How many cores this process may use, and how many threads to use by default.
// (Provisional: affinity mask only; the full rules are being written.)
#pragma once

#include <cstddef>
#include <thread>
#if defined(__linux__)
#include <sched.h>
#endif

namespace RcppSpool {

inline std::size_t availableCores()
{
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return static_cast<std::size_t>(n);
    }
#endif
    unsigned n = std::thread::hardware_concurrency();
    return n ? n : 1;
}

inline std::size_t defaultThreads() { return availableCores(); }

}  // namespace RcppSpool
