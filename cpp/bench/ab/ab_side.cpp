// One side of tools/ab-bench.sh: engine benchmarks built against one version
// of the headers. The script compiles this file twice, against two header
// trees that it gives ABI numbers of their own (so that their inline
// functions and statics never merge), and links both into ab_main.cpp,
// which alternates the sides round by round.
#include <RcppSpool.h>
#include <RcppSpool/RcppParallel.h>

#include <vector>

#include "../engine_work.h"

#ifndef AB_SIDE
#error "AB_SIDE must name the side (A or B)"
#endif
#define AB_CAT_(a, b) a##b
#define AB_CAT(a, b) AB_CAT_(a, b)
#define AB_FN(name) AB_CAT(AB_CAT(side, AB_SIDE), _##name)

namespace {

using namespace engine_work;

//! The median time of `f` in microseconds over 25 calls, after the other
//! side's threads settled (see timeBlock()).
template <class F>
double block(F&& f)
{
    static const bool started = (RcppSpool::ThreadPool::globalInstance().setNumThreads(2), true);
    (void)started;
    std::vector<double> t;
    timeBlock(f, 25, t);
    return 1e6 * median(t);
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
    return block([] { opaque(fibSpool(25)); });
}
//! P3's shape at fib(25): two async() per call.
double AB_FN(fibAsync)()
{
    return block([] { opaque(fibSpoolAsync(25)); });
}
//! P3's shape at fib(25): one async() per call, the other branch a plain call.
double AB_FN(fibAsyncOne)()
{
    return block([] { opaque(fibSpoolAsyncOne(25)); });
}
//! fib(n) once, for ab_main's comparison with oneTBB: `shape` 0 one async()
//! per call, 1 one TaskGroup task per call, 2 two async() per call, 3 two
//! TaskGroup tasks per call. Returns the result.
long AB_FN(fib)(int shape, int n)
{
    static const bool started = (RcppSpool::ThreadPool::globalInstance().setNumThreads(2), true);
    (void)started;
    switch (shape) {
    case 0: return fibSpoolAsyncOne(n);
    case 1: return fibSpoolOne(n);
    case 2: return fibSpoolAsync(n);
    default: return fibSpool(n);
    }
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
//! RcppParallel's vector sum example (a Worker reducer over 1e7 doubles,
//! grain size 1: 128 leaves) through RcppSpool/RcppParallel.h.
double AB_FN(rpVectorSum)()
{
    namespace RP = RcppSpool::RcppParallel;
    struct Sum : RP::Worker {
        const RP::RVector<double> input;
        double value = 0;
        Sum(double* b, double* e) : input(b, e) {}
        Sum(const Sum& other, RP::Split) : input(other.input) {}
        void operator()(std::size_t begin, std::size_t end) override
        {
            for (std::size_t i = begin; i < end; ++i) value += input[i];
        }
        void join(const Sum& rhs) { value += rhs.value; }
    };
    static std::vector<double> x(10000000, 0.25);
    return block([] {
        Sum sum(x.data(), x.data() + x.size());
        RP::parallelReduce(0, x.size(), sum, 1, 2);
        opaque(static_cast<std::ptrdiff_t>(sum.value));
    });
}
