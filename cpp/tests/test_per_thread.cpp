// Range bodies for parallel loops, thisThreadIndex() and PerThread<T>.
#include <RcppSpool.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace {

// The values of the histogram test: a fixed, cheap pseudo-random sequence.
std::uint32_t valueAt(std::ptrdiff_t i)
{
    std::uint64_t x = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    return static_cast<std::uint32_t>(x >> 40);
}

}  // namespace

TEST(RangeBody, CoversEveryIndexOnceInChunksForManySizesAndThreadCounts)
{
    for (std::size_t threads : {1u, 2u, 3u, 8u}) {
        for (std::ptrdiff_t n : {1, 2, 7, 100, 10007}) {
            std::vector<int> seen(static_cast<std::size_t>(n), 0);
            std::atomic<int> chunks{0};
            RcppSpool::parallelFor(
                0, n,
                [&](std::ptrdiff_t b, std::ptrdiff_t e) {
                    ASSERT_LT(b, e);
                    ++chunks;
                    for (std::ptrdiff_t i = b; i < e; ++i) ++seen[static_cast<std::size_t>(i)];
                },
                threads);
            EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }))
                << "n = " << n << ", threads = " << threads;
            EXPECT_LE(chunks.load(), n);
            if (n >= 10007) {
                EXPECT_LT(chunks.load(), n / 10) << "a range body is called per chunk, not per index";
            }
        }
    }
}

TEST(RangeBody, NegativeBoundsAndSizeTParameters)
{
    std::atomic<long long> sum{0};
    // Parameters of another integer type convert from ptrdiff_t.
    RcppSpool::parallelFor(-500, 500, [&](long b, long e) {
        long long s = 0;
        for (long i = b; i < e; ++i) s += i;
        sum += s;
    });
    EXPECT_EQ(sum.load(), -500);
    std::atomic<std::size_t> count{0};
    RcppSpool::parallelFor(0, 1000, [&](std::size_t b, std::size_t e) { count += e - b; });
    EXPECT_EQ(count.load(), 1000u);
    // An empty or reversed range calls nothing.
    RcppSpool::parallelFor(5, 5, [](std::ptrdiff_t, std::ptrdiff_t) { FAIL(); });
    RcppSpool::parallelFor(5, 1, [](std::ptrdiff_t, std::ptrdiff_t) { FAIL(); });
}

TEST(RangeBody, NBatchesBoundsTheChunks)
{
    std::mutex m;
    std::vector<std::ptrdiff_t> sizes;
    RcppSpool::parallelFor(
        0, 1000,
        [&](std::ptrdiff_t b, std::ptrdiff_t e) {
            std::lock_guard<std::mutex> lk(m);
            sizes.push_back(e - b);
        },
        2, 10);
    EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), std::ptrdiff_t{0}), 1000);
    for (auto s : sizes) EXPECT_GE(s, 100);  // none smaller than (end - begin) / nBatches
    EXPECT_LE(sizes.size(), 10u);
}

TEST(RangeBody, LongChunksEndOnMultiplesOf64SoVectorLoopsSeeAlignedData)
{
    // The first chunks are 1 and 8 iterations long (expensive bodies are
    // cancelled between single iterations); after them every chunk of a
    // block started at an index of 1 modulo 8 (axpy over doubles: 14% slower
    // serially, 1.17x OpenMP static's time on 2 threads at -O3). Chunks of
    // 256 iterations or more must end on a multiple of 64, or at the loop's
    // end; the blocks start on such a multiple too.
    for (std::size_t threads : {2u, 3u}) {
        for (auto range : {std::pair<std::ptrdiff_t, std::ptrdiff_t>{0, 1000000},
                           std::pair<std::ptrdiff_t, std::ptrdiff_t>{-1000003, 999999},
                           std::pair<std::ptrdiff_t, std::ptrdiff_t>{7, 300007}}) {
            std::mutex m;
            std::vector<std::pair<std::ptrdiff_t, std::ptrdiff_t>> chunks;
            std::atomic<std::ptrdiff_t> covered{0};
            RcppSpool::parallelFor(
                range.first, range.second,
                [&](std::ptrdiff_t b, std::ptrdiff_t e) {
                    volatile double sink = 0;
                    for (std::ptrdiff_t i = b; i < e; ++i) sink = sink + static_cast<double>(i);
                    covered += e - b;
                    std::lock_guard<std::mutex> lk(m);
                    chunks.emplace_back(b, e);
                },
                threads);
            EXPECT_EQ(covered.load(), range.second - range.first);
            int longOnes = 0;
            for (const auto& c : chunks) {
                if (c.second - c.first < 256 || c.second == range.second) continue;
                ++longOnes;
                EXPECT_EQ(((c.second % 64) + 64) % 64, 0)
                    << "chunk [" << c.first << ", " << c.second << ") of " << range.first << ".." << range.second
                    << " on " << threads << " threads";
            }
            EXPECT_GT(longOnes, 0);
        }
    }
}

TEST(RangeBody, ChunksShrinkTowardsTheEndOfTheLoop)
{
    // Chunks grow until one takes ~20 us and shrink towards a block's end:
    // a participant takes at most half of what is left in its own block (a
    // quarter on 2 threads in another's), down to ~a 32nd of its grain.
    // Growth once also counted the chunks cut short by that shrinking (quick
    // because they were short), so the size wanted kept growing and the last
    // chunk of a block was an eighth of the whole loop (125,619 of 1e6
    // iterations of axpy): one thread ran it while the other had nothing
    // left. Only a faulty growth or shrink makes chunks larger than this
    // test allows; a slow or loaded machine makes them smaller.
    const std::ptrdiff_t n = 1000000;
    for (std::size_t threads : {2u, 3u}) {
        std::mutex m;
        std::vector<std::pair<std::ptrdiff_t, std::ptrdiff_t>> chunks;
        RcppSpool::parallelFor(
            0, n,
            [&](std::ptrdiff_t b, std::ptrdiff_t e) {
                volatile double sink = 0;
                for (std::ptrdiff_t i = b; i < e; ++i) sink = sink + static_cast<double>(i);
                std::lock_guard<std::mutex> lk(m);
                chunks.emplace_back(b, e);
            },
            threads);
        for (const auto& c : chunks) {
            // The last eighth lies in the last block, which ends at n.
            if (c.first >= n - n / 8) {
                EXPECT_LE(c.second - c.first, (n - c.first) / 2 + n / 64)
                    << "chunk [" << c.first << ", " << c.second << ") on " << threads << " threads";
            }
            if (c.second == n) {
                EXPECT_LE(c.second - c.first, n / 64)
                    << "last chunk [" << c.first << ", " << c.second << ") on " << threads << " threads";
            }
        }
    }
}

TEST(RangeBody, AnExceptionSkipsTheChunksNotStartedAndIsRethrown)
{
    // Every other chunk waits until the first one (the caller's, as block 0
    // is) has thrown, so that the loop cannot finish before: the test once
    // assumed the caller starts at once, and under wine one time it did not
    // for 0.2 s, while the other thread ran 999 chunks. Each then takes 1 ms
    // by the clock, not by sleep_for(): on Windows a sleep shorter than a
    // millisecond may return at once (winpthreads rounds it down), and under
    // wine, where unwinding the exception took milliseconds, the other thread
    // ran all 999 chunks meanwhile.
    std::atomic<std::ptrdiff_t> done{0};
    std::atomic<bool> thrown{false};
    EXPECT_THROW(RcppSpool::parallelFor(
                     0, 1000000,
                     [&](std::ptrdiff_t b, std::ptrdiff_t e) {
                         if (b == 0) {
                             thrown = true;
                             throw std::runtime_error("first chunk");
                         }
                         const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                         while (!thrown.load() && std::chrono::steady_clock::now() < deadline)
                             std::this_thread::sleep_for(std::chrono::microseconds(100));
                         const auto busyUntil = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
                         while (std::chrono::steady_clock::now() < busyUntil) {
                         }
                         done += e - b;
                     },
                     2, 1000),
                 std::runtime_error);
    // Once the error is in, no chunk starts: what ran is the chunk the other
    // thread was in, and those it began while the exception was on its way
    // to the loop (1 ms each; 20 of them would be 20 ms). Without the
    // cancellation, 999 chunks would run.
    EXPECT_LE(done.load(), 20000);
}

TEST(RangeBody, ThePoolsDetachedLoopTakesRangesToo)
{
    RcppSpool::ThreadPool pool(2);
    std::vector<int> seen(5000, 0);
    pool.parallelFor(0, 5000, [&](std::ptrdiff_t b, std::ptrdiff_t e) {
        for (std::ptrdiff_t i = b; i < e; ++i) ++seen[static_cast<std::size_t>(i)];
    });
    pool.wait();
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
}

TEST(RangeBody, ACallableWithBothFormsGetsRanges)
{
    struct Both {
        std::atomic<int>* ranges;
        std::atomic<int>* indices;
        void operator()(std::ptrdiff_t) const { ++*indices; }
        void operator()(std::ptrdiff_t, std::ptrdiff_t) const { ++*ranges; }
    };
    std::atomic<int> ranges{0}, indices{0};
    RcppSpool::parallelFor(0, 100, Both{&ranges, &indices});
    EXPECT_GT(ranges.load(), 0);
    EXPECT_EQ(indices.load(), 0);
}

TEST(ThisThreadIndex, ZeroOutsidePoolsAndOnePlusTheWorkerIndexInside)
{
    EXPECT_EQ(RcppSpool::thisThreadIndex(), 0u);
    std::thread([] { EXPECT_EQ(RcppSpool::thisThreadIndex(), 0u); }).join();

    auto& global = RcppSpool::ThreadPool::globalInstance();
    global.setNumThreads(3);
    std::mutex m;
    std::set<std::size_t> seen;
    RcppSpool::parallelFor(0, 2000, [&](std::ptrdiff_t) {
        const std::size_t k = RcppSpool::thisThreadIndex();
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        std::lock_guard<std::mutex> lk(m);
        seen.insert(k);
    });
    ASSERT_FALSE(seen.empty());
    EXPECT_LE(*seen.rbegin(), 3u) << "indices lie in [0, getNumThreads()]";

    // Each worker of a private pool: its own index, stable across tasks.
    RcppSpool::ThreadPool pool(2);
    std::vector<std::pair<std::thread::id, std::size_t>> pairs;
    for (int k = 0; k < 200; ++k)
        pool.push([&] {
            std::lock_guard<std::mutex> lk(m);
            pairs.emplace_back(std::this_thread::get_id(), RcppSpool::thisThreadIndex());
        });
    pool.wait();
    std::set<std::size_t> indices;
    for (auto& [id, k] : pairs) {
        EXPECT_TRUE(k == 1 || k == 2);
        indices.insert(k);
        for (auto& [id2, k2] : pairs)
            if (id == id2) {
                EXPECT_EQ(k, k2);
            }
    }
    global.setNumThreads(2);
}

TEST(PerThread, HistogramOf1e7ValuesIsRightFor1_2And8Threads)
{
    const std::ptrdiff_t n = 10000000;
    const std::size_t bins = 64;
    std::vector<long> expected(bins, 0);
    for (std::ptrdiff_t i = 0; i < n; ++i) ++expected[valueAt(i) % bins];
    for (std::size_t threads : {1u, 2u, 8u}) {
        RcppSpool::PerThread<std::vector<long>> counts(std::vector<long>(bins, 0));
        RcppSpool::parallelFor(
            0, n,
            [&](std::ptrdiff_t b, std::ptrdiff_t e) {
                auto& mine = counts.local();
                for (std::ptrdiff_t i = b; i < e; ++i) ++mine[valueAt(i) % bins];
            },
            threads);
        std::vector<long> total(bins, 0);
        counts.forEach([&](const std::vector<long>& c) {
            for (std::size_t k = 0; k < bins; ++k) total[k] += c[k];
        });
        EXPECT_EQ(total, expected) << threads << " threads";
        EXPECT_GE(counts.size(), 1u);
        EXPECT_LE(counts.size(), threads);
        auto combined = counts.combine([&](std::vector<long> a, const std::vector<long>& b) {
            for (std::size_t k = 0; k < bins; ++k) a[k] += b[k];
            return a;
        });
        EXPECT_EQ(combined, expected);
    }
}

TEST(PerThread, ManyThreadsGrowTheTableAndEachKeepsItsOwnValue)
{
    // More threads than the first table has slots (32): every thread still
    // gets one value of its own, and asking again gives the same one. All
    // are alive at once (a barrier): a thread started after another ended
    // may get the ended one's value (its thread-local key's address can be
    // reused), as documented; under wine threads start slowly enough for
    // that (the mingw-w64 run of make test).
    RcppSpool::PerThread<int> perThread;
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0}, arrived{0};
    const int n = 100;
    for (int k = 0; k < n; ++k)
        threads.emplace_back([&, k] {
            int& mine = perThread.local();
            if (mine != 0) ++wrong;
            mine = k + 1;
            ++arrived;
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            while (arrived.load() < n && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            if (&perThread.local() != &mine || mine != k + 1) ++wrong;
        });
    for (auto& t : threads) t.join();
    ASSERT_EQ(arrived.load(), n);
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(perThread.size(), 100u);
    EXPECT_EQ(perThread.combine([](int a, int b) { return a + b; }), 100 * 101 / 2);
    perThread.clear();
    EXPECT_EQ(perThread.size(), 0u);
    EXPECT_EQ(perThread.local(), 0);  // starts anew
}

TEST(PerThread, StartsFromAnInitialiserAndCombinesNothingToIt)
{
    int made = 0;
    RcppSpool::PerThread<std::vector<double>> scratch([&] {
        ++made;
        return std::vector<double>(16, 1.5);
    });
    EXPECT_EQ(scratch.combine([](std::vector<double> a, const std::vector<double>&) { return a; }),
              std::vector<double>(16, 1.5));
    EXPECT_EQ(scratch.local().size(), 16u);
    scratch.local().push_back(2);
    EXPECT_EQ(scratch.local().size(), 17u);  // the same value
    EXPECT_EQ(made, 2);                      // one for combine(), one for this thread
}

TEST(PerThread, AThrowingInitialiserLeavesNoValueAndIsTriedAgain)
{
    int calls = 0;
    RcppSpool::PerThread<int> p([&]() -> int {
        if (++calls == 1) throw std::runtime_error("no memory");
        return 7;
    });
    EXPECT_THROW(p.local(), std::runtime_error);
    EXPECT_EQ(p.size(), 0u);
    EXPECT_EQ(p.local(), 7);
    EXPECT_EQ(p.size(), 1u);
}

TEST(PerThread, ValuesDoNotShareCacheLines)
{
    RcppSpool::PerThread<char> p;
    std::vector<std::uintptr_t> addresses;
    std::mutex m;
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k)
        threads.emplace_back([&] {
            auto a = reinterpret_cast<std::uintptr_t>(&p.local());
            std::lock_guard<std::mutex> lk(m);
            addresses.push_back(a);
        });
    for (auto& t : threads) t.join();
    for (auto a : addresses) EXPECT_EQ(a % 64, 0u);
}
