// Sharing the cores with OpenMP regions that a parallel loop's body opens.
//
// Why: a body that runs an OpenMP `parallel for` (its own, or a library's)
// opens a team of omp_get_max_threads() threads (by default one per core)
// on every participant of the loop: on 2 cores, 2 participants made 4
// OpenMP threads, whose barriers spin against each other
// (cpp/bench/bench_shapes.cpp, `omp-inner`: 1.9-2.3x the time of an OpenMP
// outer loop). OpenMP itself runs a region nested in another on one thread.
// A participant of a loop therefore gives its OpenMP regions at most their
// share, max(1, n / participants) threads, n being what they would get, from
// its first piece until it leaves the loop, when n is put back. From the
// first piece, not after a while: a region opened on n threads leaves its
// OpenMP threads spinning for a while after it ends (libgomp: up to
// GOMP_SPINCOUNT turns) on the cores the loop needs; sharing only after
// 200 us of a loop cost 1-1.5 ms of a 10 ms loop of 1000 OpenMP items
// (`omp-inner`, 2 threads: median 11.3-11.8 ms against 9.3-10.0 ms from
// the first piece, as OpenMP's own outer loop). Only the default is changed
// (OpenMP's nthreads-var, a per-thread setting): a region with a
// num_threads clause keeps it.
//
// The OpenMP runtime is looked up among the libraries already loaded
// (libgomp, LLVM's libomp, Intel's libiomp5; R on Linux loads libgomp
// itself), never loaded; a reference is kept so that it cannot be unloaded
// under us. Not on Windows (packages link their OpenMP runtime statically
// there), where loops leave OpenMP alone.
#pragma once

#include "../abi.h"

#include <atomic>
#include <chrono>
#include <cstdint>

#if !defined(_WIN32)
#include <dlfcn.h>
#define RCPPSPOOL_OPENMP_SHARE 1
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

namespace openmp_detail {

//! The two OpenMP functions we call, from the runtime the process loaded.
struct Runtime {
    int (*maxThreads)();
    void (*setThreads)(int);
};

#ifdef RCPPSPOOL_OPENMP_SHARE
//! Looks for a loaded OpenMP runtime; null if none is loaded.
inline const Runtime* lookUp() noexcept
{
    static const char* const names[] = {"libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so",
                                        "libomp.dylib", "libiomp5.dylib", "libgomp.1.dylib"};
    for (const char* name : names) {
        // RTLD_NOLOAD: only if loaded already; the handle (never closed)
        // keeps it loaded as long as we may call it.
        void* h = ::dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        auto get = reinterpret_cast<int (*)()>(::dlsym(h, "omp_get_max_threads"));
        auto set = reinterpret_cast<void (*)(int)>(::dlsym(h, "omp_set_num_threads"));
        if (get && set) return new Runtime{get, set};
        ::dlclose(h);
    }
    return nullptr;
}
#endif

//! The loaded OpenMP runtime, or null. The first call looks for it, and
//! the threads that call meanwhile wait for that look (a static's
//! initialisation): the participants of a process's first loop all get
//! their share (a thread told "none" while another was still looking ran
//! its part of that loop on n OpenMP threads: seen under ThreadSanitizer).
//! While none is found, looked for again at most once a second (a package
//! loaded later may bring one): `nowMs` is the caller's clock (steady_clock,
//! in ms), which a loop has read already.
inline const Runtime* runtime(std::int64_t nowMs) noexcept
{
#ifdef RCPPSPOOL_OPENMP_SHARE
    static std::atomic<const Runtime*> found{lookUp()};
    static std::atomic<std::int64_t> lastLook{nowMs};
    if (const Runtime* r = found.load(std::memory_order_acquire)) return r;
    std::int64_t last = lastLook.load(std::memory_order_relaxed);
    if (nowMs - last < 1000 || !lastLook.compare_exchange_strong(last, nowMs, std::memory_order_relaxed))
        return nullptr;
    const Runtime* r = lookUp();
    if (!r) return nullptr;
    const Runtime* none = nullptr;
    if (!found.compare_exchange_strong(none, r, std::memory_order_acq_rel)) {
        delete r;  // another thread found it first (its handle stays open: harmless)
        return none;
    }
    return r;
#else
    (void)nowMs;
    return nullptr;
#endif
}

}  // namespace openmp_detail

//! One participant's share of OpenMP threads for its part of a loop (see
//! the file's comment): begin() sets it, the destructor (or end()) puts the
//! thread's OpenMP default back.
class OpenMpShare {
public:
    OpenMpShare() noexcept = default;
    ~OpenMpShare() { end(); }
    OpenMpShare(const OpenMpShare&) = delete;
    OpenMpShare& operator=(const OpenMpShare&) = delete;

    //! Limits the calling thread's OpenMP regions to max(1, n /
    //! `participants`) threads, if an OpenMP runtime is loaded and that is
    //! fewer than they would get (n). `now` is the caller's clock reading
    //! (a loop's start). Once per participation.
    void begin(int participants, std::chrono::steady_clock::time_point now) noexcept
    {
        if (begun_ || participants < 2) return;
        begun_ = true;
        omp_ = openmp_detail::runtime(
            std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count());
        if (!omp_) return;
        const int n = omp_->maxThreads();
        const int share = n / participants > 1 ? n / participants : 1;
        if (share >= n) return;
        saved_ = n;
        omp_->setThreads(share);
    }
    //! Whether begin() was called (in this participation).
    bool begun() const noexcept { return begun_; }
    //! Puts the thread's OpenMP default back (if begin() changed it).
    void end() noexcept
    {
        if (saved_ > 0) omp_->setThreads(saved_);
        saved_ = 0;
    }

private:
    const openmp_detail::Runtime* omp_ = nullptr;
    int saved_ = 0;  // the thread's default before begin(); 0: unchanged
    bool begun_ = false;
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
