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
    EXPECT_EQ(RcppSpool::client::api().version, RcppSpool::client::kApiVersion);
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
        if (i == 10) RcppSpool::engine::interruptFlag().store(true);
    }, 2), RcppSpool::UserInterruptException);
    RcppSpool::engine::interruptFlag().store(false);
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
