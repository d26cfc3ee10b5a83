// Plain C++ with the runtime compiled once (client/api.h): every file is
// built with RCPPSPOOL_SEPARATE_RUNTIME, and runtime.cpp alone defines
// RCPPSPOOL_IMPLEMENTATION. Loops of this file run through the table of
// that file: results, exceptions of the body's own type, interrupts, the
// default thread count and nested loops are as with the headers alone.
#include <RcppSpool.h>
#include <gtest/gtest.h>

#include "../platform.h"

#include <atomic>
#include <cstdlib>
#include <functional>
#include <string>
#include <stdexcept>
#include <vector>

namespace {
struct BodyError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
}  // namespace

TEST(SeparateRuntime, LoopsRunThroughTheProgramsOneRuntime)
{
    std::vector<int> hits(10000);
    RcppSpool::parallelFor(0, 10000, [&](std::ptrdiff_t i) { ++hits[i]; });
    for (int h : hits) ASSERT_EQ(h, 1);
    const double sum = RcppSpool::parallelReduce(0, 1000, 0.0, [](std::ptrdiff_t i) { return double(i); },
                                                 std::plus<double>(), 3);
    EXPECT_EQ(sum, 999.0 * 1000 / 2);
    std::atomic<long> nested{0};
    RcppSpool::parallelFor(0, 8, [&](std::ptrdiff_t) {
        RcppSpool::parallelFor(0, 100, [&](std::ptrdiff_t b, std::ptrdiff_t e) { nested += e - b; }, 2, 100);
    });
    EXPECT_EQ(nested.load(), 800);
    EXPECT_EQ(&RcppSpool::client::api(), &RcppSpool::client::separateRuntimeApi());
    EXPECT_EQ(RcppSpool::client::api().version, RcppSpool::table::kApiVersion);
}

TEST(SeparateRuntime, ErrorsComeBackAsTheyWereThrown)
{
    try {
        RcppSpool::parallelFor(0, 1000, [](std::ptrdiff_t i) {
            if (i == 500) throw BodyError("body failed at 500");
        });
        FAIL() << "no exception";
    } catch (const BodyError& e) {
        EXPECT_STREQ(e.what(), "body failed at 500");
    }
    // A nested loop's error crosses both loops, still of its own type.
    EXPECT_THROW(RcppSpool::parallelFor(0, 4, [](std::ptrdiff_t) {
        RcppSpool::parallelFor(0, 10, [](std::ptrdiff_t j) {
            if (j == 3) throw BodyError("inner");
        });
    }), BodyError);
    // The user's interrupt: the loop stops and the call throws
    // UserInterruptException (the status crosses the table, not the exception).
    std::atomic<long> ran{0};
    EXPECT_THROW(RcppSpool::parallelFor(0, 1000000, [&](std::ptrdiff_t i) {
        ++ran;
        if (i == 10) RcppSpool::client::interruptFlag().store(true);
    }, 2), RcppSpool::UserInterruptException);
    RcppSpool::client::interruptFlag().store(false);
    EXPECT_LT(ran.load(), 1000000);
    // The pool works afterwards.
    std::atomic<int> after{0};
    RcppSpool::parallelFor(0, 100, [&](std::ptrdiff_t) { ++after; });
    EXPECT_EQ(after.load(), 100);
}

TEST(SeparateRuntime, ThreadCountsComeFromTheRuntime)
{
    test_platform::setEnv("RCPPSPOOL_NUM_THREADS", "3");
    EXPECT_EQ(RcppSpool::defaultThreads(), 3u);
    test_platform::unsetEnv("RCPPSPOOL_NUM_THREADS");
    EXPECT_GE(RcppSpool::availableCores(), 1u);
    // A bad setting is std::invalid_argument, with the runtime's message.
    test_platform::setEnv("SLURM_CPUS_PER_TASK", "0");
    try {
        RcppSpool::availableCores();
        ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("availableCores(): "), std::string::npos) << e.what();
    }
    test_platform::unsetEnv("SLURM_CPUS_PER_TASK");
    EXPECT_GE(RcppSpool::availableCores(), 1u);
}

namespace {
long fib(int n)
{
    if (n < 2) return n;
    auto a = RcppSpool::async(fib, n - 1);
    long b = fib(n - 2);
    return a.get() + b;
}
long fibGroup(int n)
{
    if (n < 2) return n;
    long a = 0, b = 0;
    RcppSpool::TaskGroup g;
    g.run([&] { a = fibGroup(n - 1); });
    b = fibGroup(n - 2);
    g.wait();
    return a + b;
}
}  // namespace

// The task layer through the table (version 3): pools are handles, tasks
// cross as 64-byte units, futures keep their results here, errors come back
// boxed and are rethrown with their own type.
TEST(SeparateRuntime, TasksFuturesGroupsAndPoolsRunThroughTheTable)
{
    EXPECT_EQ(fib(20), 6765);
    EXPECT_EQ(fibGroup(18), 2584);
    // A deferred call and a call the library may defer.
    auto d = RcppSpool::async(std::launch::deferred, [] { return 7; });
    auto e = RcppSpool::async(std::launch::async | std::launch::deferred, [] { return 8; });
    EXPECT_EQ(d.get() + e.get(), 15);
    // A pool of its own: push, pushReturn (a closure too large to travel
    // inline), a loop nobody blocks on, wait(), an error of its own type.
    RcppSpool::ThreadPool pool(2);
    std::atomic<long> sum{0};
    for (int i = 0; i < 1000; ++i) pool.push([&sum, i] { sum += i; });
    std::vector<int> big(100, 1);
    auto r = pool.pushReturn([big] { return static_cast<long>(big.size()); });
    pool.parallelFor(0, 1000, [&sum](std::ptrdiff_t i) { sum += i; });
    pool.wait();
    EXPECT_EQ(sum.load(), 2 * 999L * 1000 / 2);
    EXPECT_EQ(r.get(), 100);
    pool.push([] { throw BodyError("task failed"); });
    EXPECT_THROW(pool.wait(), BodyError);
    pool.parallelFor(0, 10, [](std::ptrdiff_t i) {
        if (i == 5) throw BodyError("chunk failed");
    });
    EXPECT_THROW(pool.wait(), BodyError);
    auto f = pool.pushReturn([]() -> int { throw BodyError("result failed"); });
    EXPECT_THROW(f.get(), BodyError);
    // A group's error, and the group reused after it.
    RcppSpool::TaskGroup g(pool);
    g.run([] { throw BodyError("group failed"); });
    EXPECT_THROW(g.wait(), BodyError);
    std::atomic<int> ran{0};
    g.run([&ran] { ++ran; });
    g.wait();
    EXPECT_EQ(ran.load(), 1);
    g.cancel();
    EXPECT_TRUE(g.isCancelled());
    g.run([&ran] { ++ran; });
    g.wait();
    EXPECT_EQ(ran.load(), 1);
    EXPECT_FALSE(g.isCancelled());
    // join(), and the pool back after it.
    pool.push([&ran] { ++ran; });
    pool.join();
    EXPECT_EQ(pool.getNumThreads(), 0u);
    pool.push([&ran] { ++ran; });
    pool.wait();
    EXPECT_EQ(ran.load(), 3);
    EXPECT_EQ(pool.getNumThreads(), 2u);
    // A pool call's error says what was wrong (the thread's last message).
    try {
        pool.setNumThreads(5000);
        ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "RcppSpool: a pool has 0 to 1024 workers, not 5000");
    }
    // A Thread, and an index per worker.
    RcppSpool::Thread t([&ran] { ++ran; });
    t.join();
    EXPECT_EQ(ran.load(), 4);
    std::atomic<std::size_t> maxIndex{0};
    pool.parallelFor(0, 100, [&maxIndex](std::ptrdiff_t) {
        std::size_t k = RcppSpool::thisThreadIndex(), m = maxIndex.load();
        while (k > m && !maxIndex.compare_exchange_weak(m, k)) {}
    });
    pool.wait();
    EXPECT_LE(maxIndex.load(), 2u);
    EXPECT_EQ(RcppSpool::thisThreadIndex(), 0u);
}
