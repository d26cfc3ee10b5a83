// Randomized stress of the engine: a mix of everything, from several
// submitting threads, checked by counters (every task ran exactly once or was
// reported cancelled). 100 rounds by default; RCPPSPOOL_STRESS_SECONDS=N runs
// rounds until N seconds have passed (the soak). The mix of work comes from
// a seed, printed; RCPPSPOOL_TEST_SEED=S runs the mix of seed S.
#include <RcppSpool.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

namespace {

long fibAsync(RcppSpool::ThreadPool& pool, int n)
{
    if (n < 2) return n;
    auto a = pool.pushReturn([&pool, n] { return fibAsync(pool, n - 1); });
    long b = fibAsync(pool, n - 2);
    return a.get() + b;
}

long fibGroup(RcppSpool::ThreadPool& pool, int n)
{
    if (n < 2) return n;
    long a = 0, b = 0;
    RcppSpool::TaskGroup g(pool);
    g.run([&] { a = fibGroup(pool, n - 1); });
    b = fibGroup(pool, n - 2);
    g.wait();
    return a + b;
}

const long fibs[] = {0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610};

struct Round {
    std::mt19937_64 rng;
    explicit Round(std::uint64_t seed) : rng(seed) {}
    int pick(int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }

    // One random operation on `pool`; returns a description of a failure or "".
    std::string step(RcppSpool::ThreadPool& pool)
    {
        switch (pick(9)) {
        case 0: {  // plain pushes, counted
            const int n = 1 + pick(2000);
            auto runs = std::make_shared<std::vector<std::atomic<int>>>(n);
            for (int i = 0; i < n; ++i) pool.push([runs, i] { (*runs)[i]++; });
            pool.wait();
            for (int i = 0; i < n; ++i)
                if ((*runs)[i] != 1) return "push: task ran " + std::to_string((*runs)[i].load()) + " times";
            return "";
        }
        case 1: {  // futures
            const int n = 1 + pick(200);
            std::vector<RcppSpool::Future<int>> fs;
            for (int i = 0; i < n; ++i) fs.push_back(pool.pushReturn([i] { return i * 3; }));
            for (int i = 0; i < n; ++i)
                if (fs[i].get() != i * 3) return "pushReturn: wrong value";
            return "";
        }
        case 2: {  // nested member loops
            const int n = 1 + pick(40);
            auto hits = std::make_shared<std::vector<std::atomic<int>>>(n * n);
            pool.parallelFor(0, n, [&pool, hits, n](std::ptrdiff_t i) {
                pool.parallelFor(0, n, [hits, i, n](std::ptrdiff_t j) { (*hits)[i * n + j]++; });
                pool.wait();
            });
            pool.wait();
            for (auto& h : *hits)
                if (h != 1) return "nested loop: cell visited " + std::to_string(h.load()) + " times";
            return "";
        }
        case 3: {  // recursive async and task groups
            int n = 5 + pick(10);
            if (fibAsync(pool, n) != fibs[n]) return "fibAsync wrong";
            if (fibGroup(pool, n) != fibs[n]) return "fibGroup wrong";
            return "";
        }
        case 4: {  // an exception among many tasks: rethrown once, rest cancelled or run once
            const int n = 10 + pick(1000);
            const int bad = pick(n);
            auto runs = std::make_shared<std::vector<std::atomic<int>>>(n);
            for (int i = 0; i < n; ++i)
                pool.push([runs, i, bad] {
                    (*runs)[i]++;
                    if (i == bad) throw std::runtime_error("stress " + std::to_string(bad));
                });
            try {
                pool.wait();
                return "exception not rethrown";
            } catch (const std::runtime_error& e) {
                if (std::string(e.what()) != "stress " + std::to_string(bad)) return "wrong message";
            }
            for (auto& r : *runs)
                if (r > 1) return "a task ran twice";
            pool.wait();  // clean afterwards
            return "";
        }
        case 5: {  // pause, push, unpause
            pool.pause();
            auto count = std::make_shared<std::atomic<int>>(0);
            const int n = 1 + pick(300);
            for (int i = 0; i < n; ++i) pool.push([count] { (*count)++; });
            pool.unpause();
            pool.wait();
            return *count == n ? "" : "pause lost tasks";
        }
        case 6: {  // resize with queued work
            auto count = std::make_shared<std::atomic<int>>(0);
            const int n = 1 + pick(300);
            for (int i = 0; i < n; ++i) pool.push([count] { (*count)++; });
            pool.resize(1 + pick(4));
            pool.wait();
            return *count == n ? "" : "resize lost tasks";
        }
        case 7: {  // a cancelled group: tasks run at most once
            RcppSpool::TaskGroup g(pool);
            auto runs = std::make_shared<std::vector<std::atomic<int>>>(200);
            for (int i = 0; i < 200; ++i) g.run([runs, i] { (*runs)[i]++; });
            if (pick(2)) g.cancel();
            g.wait();
            for (auto& r : *runs)
                if (r > 1) return "cancelled group ran a task twice";
            return "";
        }
        default: {  // a short-lived pool destroyed with work queued
            auto count = std::make_shared<std::atomic<int>>(0);
            {
                RcppSpool::ThreadPool tmp(1 + pick(3));
                for (int i = 0; i < 500; ++i) tmp.push([count] { (*count)++; });
                if (pick(2)) tmp.wait();
            }
            const int after = *count;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            return *count == after ? "" : "a task ran after its pool was destroyed";
        }
        }
    }
};

double stressSeconds()
{
    const char* s = std::getenv("RCPPSPOOL_STRESS_SECONDS");
    return s ? std::atof(s) : 0.0;
}

//! RCPPSPOOL_TEST_SEED if set, else `fallback`.
std::uint64_t testSeed(std::uint64_t fallback)
{
    const char* s = std::getenv("RCPPSPOOL_TEST_SEED");
    return s && *s ? std::strtoull(s, nullptr, 10) : fallback;
}

}  // namespace

TEST(Stress, RandomizedRoundsFromSeveralSubmittingThreads)
{
    const double seconds = stressSeconds();
    const int minRounds = 100;
    const std::uint64_t seed = testSeed(1234);
    std::printf("[ stress   ] seed %llu (RCPPSPOOL_TEST_SEED=%llu repeats the mix)\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
    RcppSpool::ThreadPool shared(2);
    std::atomic<int> rounds{0};
    std::atomic<int> failures{0};
    std::string firstFailure;
    std::mutex m;
    const auto start = Clock::now();
    auto more = [&] {
        if (seconds > 0) return std::chrono::duration<double>(Clock::now() - start).count() < seconds;
        return rounds.load() < minRounds;
    };
    // Three threads submit to their own pools, and one more to a pool it shares
    // with... itself only: ThreadPool::wait() waits for all work, so sharing a
    // pool between waiting submitters would make their checks race by design.
    std::vector<std::thread> submitters;
    for (int t = 0; t < 3; ++t)
        submitters.emplace_back([&, t] {
            RcppSpool::ThreadPool own(1 + t % 2);
            // These pools free what bursts left in their queues at every idle
            // moment (not after 0.5 s): the memory's release under stress.
            own.scheduler().setReleaseDelay(std::chrono::nanoseconds(0));
            Round r(seed + t);
            while (more()) {
                std::string f = r.step(t == 0 ? shared : own);
                rounds++;
                if (!f.empty()) {
                    failures++;
                    std::lock_guard<std::mutex> lk(m);
                    if (firstFailure.empty()) firstFailure = f;
                }
            }
        });
    for (auto& t : submitters) t.join();
    std::printf("[ stress   ] %d rounds in %.1f s, %d failures\n", rounds.load(),
                std::chrono::duration<double>(Clock::now() - start).count(), failures.load());
    EXPECT_EQ(failures.load(), 0) << firstFailure << " (seed " << seed << ")";
    EXPECT_GE(rounds.load(), minRounds);
}

TEST(Stress, TenThousandPoolCreateDestroyCycles)
{
    // Half are destroyed with tasks still queued or running: the destructor
    // must neither hang nor let a task run after it (n is on this stack).
    // RCPPSPOOL_POOL_CYCLES sets fewer where threads start slowly (wine).
    const char* c = std::getenv("RCPPSPOOL_POOL_CYCLES");
    const int cycles = c ? std::atoi(c) : 10000;
    for (int i = 0; i < cycles; ++i) {
        RcppSpool::ThreadPool pool(1 + i % 3);
        std::atomic<int> n{0};
        for (int k = 0; k < 10; ++k) pool.push([&n] { n++; });
        if (i % 2) {
            pool.wait();
            ASSERT_EQ(n.load(), 10);
        }
    }
}

TEST(Stress, OversubscribedSixteenWorkersOnTheCores)
{
    RcppSpool::ThreadPool pool(16);
    std::vector<std::atomic<int>> hits(100000);
    for (auto& h : hits) h = 0;
    pool.parallelFor(0, 100000, [&](std::ptrdiff_t i) { hits[i]++; });
    pool.wait();
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
    EXPECT_EQ(fibAsync(pool, 15), 610);
}
