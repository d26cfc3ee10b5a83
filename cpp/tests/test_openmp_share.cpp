// OpenMP regions inside a parallel loop's body get their share of the cores
// (engine/openmp_share.h): from a participant's first piece, its OpenMP
// default is max(1, n / participants) threads; it is n
// again once the loop is over, on every thread; a loop of one thread, or
// without an OpenMP runtime loaded, leaves OpenMP alone. Built with OpenMP
// where CMake finds it (not for Windows).
#include <RcppSpool.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#if defined(_OPENMP) && defined(RCPPSPOOL_OPENMP_SHARE)
#include <omp.h>

namespace {

void busyFor(std::chrono::microseconds d)
{
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {}
}

//! The OpenMP defaults body calls saw.
struct Seen {
    std::mutex m;
    std::vector<int> values;
    void add(int v)
    {
        std::lock_guard<std::mutex> lk(m);
        values.push_back(v);
    }
};

//! A loop of `iterations` 1-ms bodies on `threads` threads: the OpenMP
//! default each body call saw.
std::vector<int> defaultsSeenInALoop(std::ptrdiff_t iterations, std::size_t threads)
{
    Seen seen;
    RcppSpool::parallelFor(
        0, iterations,
        [&](std::ptrdiff_t) {
            seen.add(omp_get_max_threads());
            busyFor(std::chrono::milliseconds(1));
        },
        threads);
    return seen.values;
}

}  // namespace

TEST(OpenMpShare, ALongLoopsParticipantsGiveTheirOpenMpRegionsTheirShareThenTakeItBack)
{
    const int n = omp_get_max_threads();
    if (n < 2) GTEST_SKIP() << "OpenMP runs on one thread here";
    if (RcppSpool::ThreadPool::globalInstance().getNumThreads() < 2) GTEST_SKIP() << "one thread";
    const int share = n / 2 > 1 ? n / 2 : 1;
    // Every call, the first pieces too: a region opened on n threads
    // before the share would leave OpenMP's threads spinning on the
    // loop's cores.
    for (int v : defaultsSeenInALoop(40, 2)) EXPECT_EQ(v, share);
    EXPECT_EQ(omp_get_max_threads(), n) << "the caller's default back";
    // Every worker's too (whichever ran part of the loop).
    for (int k = 0; k < 20; ++k) {
        RcppSpool::TaskGroup g;
        std::atomic<int> wrong{0};
        for (int j = 0; j < 4; ++j)
            g.run([&] {
                busyFor(std::chrono::microseconds(200));
                if (omp_get_max_threads() != n) ++wrong;
            });
        g.wait();
        EXPECT_EQ(wrong.load(), 0);
    }
}

TEST(OpenMpShare, ALoopOfOneThreadLeavesOpenMpAlone)
{
    const int n = omp_get_max_threads();
    for (int v : defaultsSeenInALoop(20, 1)) EXPECT_EQ(v, n);
    EXPECT_EQ(omp_get_max_threads(), n);
}

// (Not under ThreadSanitizer: it does not see libgomp's own synchronisation.)
#if defined(__SANITIZE_THREAD__)
#define RCPPSPOOL_TEST_NO_REGIONS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RCPPSPOOL_TEST_NO_REGIONS 1
#endif
#endif

TEST(OpenMpShare, ARegionInTheBodyRunsOnItsShare)
{
#ifdef RCPPSPOOL_TEST_NO_REGIONS
    GTEST_SKIP() << "OpenMP regions under ThreadSanitizer";
#endif
    const int n = omp_get_max_threads();
    if (n < 2) GTEST_SKIP() << "OpenMP runs on one thread here";
    if (RcppSpool::ThreadPool::globalInstance().getNumThreads() < 2) GTEST_SKIP() << "one thread";
    const int share = n / 2 > 1 ? n / 2 : 1;
    std::atomic<int> largest{0}, calls{0}, atShare{0};  // (all at the share: see above)
    RcppSpool::parallelFor(
        0, 40,
        [&](std::ptrdiff_t) {
            busyFor(std::chrono::milliseconds(1));
            int team = 0;
#pragma omp parallel
            {
#pragma omp single
                team = omp_get_num_threads();
            }
            int l = largest.load();
            while (team > l && !largest.compare_exchange_weak(l, team)) {}
            ++calls;
            atShare += team == share;
        },
        2);
    EXPECT_EQ(calls.load(), 40);
    EXPECT_EQ(largest.load(), share);
    EXPECT_EQ(atShare.load(), 40) << "every region runs on the share";
}

#else

TEST(OpenMpShare, NotBuiltHere) { GTEST_SKIP() << "built without OpenMP, or no OpenMP sharing on this platform"; }

#endif
