// fib: recursive balanced, fine-grained (INNCABS "Fib").
// fib(n) spawns fib(n-1) and computes fib(n-2) itself, down to a cutoff below
// which it recurses sequentially. Two-way spawns of tiny tasks: this measures
// the cost of a spawn, a join and a steal more than anything else.
// Fine grain: no cutoff (cutoff 1), every call fib(n), n >= 2, spawns: the
// way fib is written with std::async.
#pragma once

#include "harness.h"

namespace bench {
namespace fib {

//! The sequential leaf (and the sequential version).
inline long seq(int n) { return n < 2 ? n : seq(n - 1) + seq(n - 2); }

BENCH_KERNEL inline long leaf(int n)
{
    noteThread();
    return seq(n);
}

//! Sequential with the same cutoff: what the parallel versions do, minus tasks.
inline long seqCut(int n, int cutoff)
{
    if (n <= cutoff) return leaf(n);
    return seqCut(n - 1, cutoff) + seqCut(n - 2, cutoff);
}

template <class A>
long futures(int n, int cutoff)
{
    if (n <= cutoff) return leaf(n);
    auto x = A::spawn([=] { return futures<A>(n - 1, cutoff); });
    long y = futures<A>(n - 2, cutoff);
    return x.get() + y;
}

template <class G>
long group(int n, int cutoff)
{
    if (n <= cutoff) return leaf(n);
    long x = 0, y = 0;
    G g;
    g.run([&] { x = group<G>(n - 1, cutoff); });
    y = group<G>(n - 2, cutoff);
    g.wait();
    return x + y;
}

inline long omp(int n, int cutoff)
{
    if (n <= cutoff) return leaf(n);
    long x = 0, y = 0;
#pragma omp task shared(x) firstprivate(n, cutoff)
    x = omp(n - 1, cutoff);
    y = omp(n - 2, cutoff);
#pragma omp taskwait
    return x + y;
}

class Bench : public Benchmark {
public:
    const char* name() const override { return "fib"; }
    const char* shape() const override { return "recursive balanced"; }
    bool hasFine() const override { return true; }
    std::string params() const override
    {
        return "n=" + std::to_string(n_) + " cutoff=" + std::to_string(cutoff_) +
               (cutoff_ <= 1 ? " (a task per call)" : "");
    }
    void setUp(bool quick, Grain grain) override
    {
        if (grain == Grain::fine) {
            n_ = quick ? 22 : 37;
            cutoff_ = 1;  // leaves are fib(1) and fib(0)
        } else {
            n_ = quick ? 32 : 45;
            cutoff_ = 16;
        }
        long a = 0, b = 1;  // the known answer, by iteration
        for (int i = 0; i < n_; ++i) {
            long t = a + b;
            a = b;
            b = t;
        }
        expect_ = a;
    }
    void reset() override { result_ = -1; }
    void run(Method m) override
    {
        switch (m) {
        case Method::seq: result_ = seqCut(n_, cutoff_); break;
        case Method::spoolAsync: result_ = futures<SpoolAsync>(n_, cutoff_); break;
        case Method::spoolOptional: result_ = futures<SpoolOptional>(n_, cutoff_); break;
        case Method::stdAsync: result_ = futures<StdAsync>(n_, cutoff_); break;
        case Method::spoolGroup: result_ = group<RcppSpool::TaskGroup>(n_, cutoff_); break;
        case Method::tbb: result_ = group<tbb::task_group>(n_, cutoff_); break;
        case Method::omp: result_ = omp(n_, cutoff_); break;
        }
    }
    bool verify() override { return result_ == expect_; }

private:
    int n_ = 0, cutoff_ = 0;
    long expect_ = 0, result_ = -1;
};

}  // namespace fib
}  // namespace bench
