// One side of tools/ab-bench.sh: engine benchmarks built against one version
// of the headers. The script compiles this file twice, against two header
// trees that it gives ABI numbers of their own (so that their inline
// functions and statics never merge), and links both into ab_main.cpp,
// which alternates the sides round by round.
#include <RcppSpool.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#ifndef AB_SIDE
#error "AB_SIDE must name the side (A or B)"
#endif
#define AB_CAT_(a, b) a##b
#define AB_CAT(a, b) AB_CAT_(a, b)
#define AB_FN(name) AB_CAT(AB_CAT(side, AB_SIDE), _##name)

namespace {

using Clock = std::chrono::steady_clock;

__attribute__((noinline)) void opaque(std::ptrdiff_t i) { asm volatile("" : : "r"(i) : "memory"); }

long fibGroup(int n)
{
    if (n < 2) return n;
    long a = 0, b = 0;
    RcppSpool::TaskGroup g;
    g.run([&] { a = fibGroup(n - 1); });
    g.run([&] { b = fibGroup(n - 2); });
    g.wait();
    return a + b;
}

long fibAsync(int n)
{
    if (n < 2) return n;
    auto a = RcppSpool::async(fibAsync, n - 1);
    auto b = RcppSpool::async(fibAsync, n - 2);
    return a.get() + b.get();
}

//! The median time of `f` in microseconds over 25 calls, after the other
//! side's threads settled (20 ms) and a 5 ms warm-up.
template <class F>
double block(F&& f)
{
    static const bool started = (RcppSpool::ThreadPool::globalInstance().setNumThreads(2), true);
    (void)started;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (auto end = Clock::now() + std::chrono::milliseconds(5); Clock::now() < end;) f();
    std::vector<double> t;
    for (int i = 0; i < 25; ++i) {
        const auto t0 = Clock::now();
        f();
        t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace

//! P2's shape: 1,000 blocking loops over 2 items (us per 1,000 calls).
double AB_FN(loops2)()
{
    return block([] {
        for (int i = 0; i < 1000; ++i) RcppSpool::parallelFor(0, 2, [](std::ptrdiff_t k) { opaque(k); }, 2);
    });
}
//! P3's shape at fib(25): a TaskGroup task per call.
double AB_FN(fibGroup)()
{
    return block([] { opaque(fibGroup(25)); });
}
//! P3's shape at fib(25): two async() per call.
double AB_FN(fibAsync)()
{
    return block([] { opaque(fibAsync(25)); });
}
//! P5's shape: a 1e6-iteration loop with an opaque body.
double AB_FN(loopOpaque)()
{
    return block([] { RcppSpool::parallelFor(0, 1000000, [](std::ptrdiff_t i) { opaque(i); }, 2); });
}
//! P6's shape: y = a x + y over 1e6 doubles, range body.
double AB_FN(axpy)()
{
    static std::vector<double> x(1000000, 1.5), y(1000000, 0.5);
    double* xp = x.data();
    double* yp = y.data();
    return block([=] {
        RcppSpool::parallelFor(0, 1000000, [=](std::ptrdiff_t b, std::ptrdiff_t e) {
            for (std::ptrdiff_t i = b; i < e; ++i) yp[i] = 1.0000001 * xp[i] + yp[i];
        }, 2);
    });
}
