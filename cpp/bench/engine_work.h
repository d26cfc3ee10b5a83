// The engine benchmarks' work and timing, shared by bench_engine.cpp and
// ab/ab_side.cpp. Every function has internal linkage (static): ab_side.cpp
// is compiled twice, against two versions of the headers, into one binary,
// and each side must keep its own copies (inline functions with external
// linkage would be merged by the linker, and one side would run the other's).
#pragma once

#include <RcppSpool.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#include "fib_shapes.h"

namespace engine_work {

using Clock = std::chrono::steady_clock;

//! A body the compiler cannot see through or drop.
[[maybe_unused, gnu::noinline]] static void opaque(std::ptrdiff_t i) { asm volatile("" : : "r"(i) : "memory"); }
[[maybe_unused, gnu::noinline]] static void opaqueTask() { asm volatile("" : : : "memory"); }

//! fib(n) by plain calls; with two TaskGroup tasks or two async() per call
//! (P3); and with one task per call, the other branch a plain call (the
//! benchmarks article's shape).
[[maybe_unused]] static long fibSerial(int n) { return n < 2 ? n : fibSerial(n - 1) + fibSerial(n - 2); }
[[maybe_unused]] static long fibSpool(int n) { return fib_shapes::group<RcppSpool::TaskGroup, true>(n); }
[[maybe_unused]] static long fibSpoolOne(int n) { return fib_shapes::group<RcppSpool::TaskGroup, false>(n); }
[[maybe_unused]] static long fibSpoolAsync(int n)
{
    if (n < 2) return n;
    auto a = RcppSpool::async(fibSpoolAsync, n - 1);
    auto b = RcppSpool::async(fibSpoolAsync, n - 2);
    return a.get() + b.get();
}
[[maybe_unused]] static long fibSpoolAsyncOne(int n)
{
    if (n < 2) return n;
    auto a = RcppSpool::async(fibSpoolAsyncOne, n - 1);
    const long b = fibSpoolAsyncOne(n - 2);
    return a.get() + b;
}

//! Seconds one call of `f` takes.
template <class F>
static double timeOnce(F&& f)
{
    const auto t0 = Clock::now();
    f();
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

//! How long the previous method's threads get to settle before a block of
//! calls of the next. libgomp's threads spin for ~7.5 ms after a loop (CPU
//! time measured in the 100 ms after one): with a warm-up of 5 ms alone,
//! that spinning thread held a core through the next block, and in 15-18%
//! of RcppSpool's calls its worker got no core before the caller had done
//! the whole loop (none with OMP_WAIT_POLICY=passive).
static constexpr std::chrono::milliseconds kSettle{20};

//! A block of `n` calls of `call`, after kSettle and a warm-up of 5 ms: the
//! seconds each took, appended to `out`.
template <class F>
static void timeBlock(F&& call, int n, std::vector<double>& out)
{
    std::this_thread::sleep_for(kSettle);
    for (const auto warmEnd = Clock::now() + std::chrono::milliseconds(5); Clock::now() < warmEnd;) call();
    for (int c = 0; c < n; ++c) out.push_back(timeOnce(call));
}

}  // namespace engine_work
