// fib(n) with a task group, in the shapes the engine benchmarks time (P3),
// for any group type with run() and wait(): RcppSpool::TaskGroup and
// tbb::task_group alike, so that both run the same code. Included by
// engine_work.h and by ab_main.cpp (which times oneTBB); it includes no
// library, and its functions have internal linkage: ab_side.cpp is compiled
// against two versions of RcppSpool into one binary, and each side must keep
// its own instantiation.
#pragma once

namespace fib_shapes {
namespace {

//! fib(n) with a task per call of a group `G`: two tasks per call (`Two`),
//! or one, the other branch a plain call (the benchmarks article's shape).
template <class G, bool Two>
long group(int n)
{
    if (n < 2) return n;
    long a = 0, b = 0;
    G g;
    g.run([&] { a = group<G, Two>(n - 1); });
    if constexpr (Two)
        g.run([&] { b = group<G, Two>(n - 2); });
    else
        b = group<G, Two>(n - 2);
    g.wait();
    return a + b;
}

}  // namespace
}  // namespace fib_shapes
