// benchmark()'s workloads with RcppParallel (Intel/oneAPI TBB underneath).
// Compiled at run time by benchmark() with Rcpp::sourceCpp() when RcppParallel
// is installed; kernels.h (same folder) holds the workloads themselves.
//
//   RcppParallel  loops: RcppParallel::parallelFor(0, n, worker, grainSize = 1,
//                 numThreads = threads), as its documentation shows; nested
//                 loops call it again inside the worker. fib: tbb::task_group
//                 per call, in a tbb::task_arena of `threads` threads.

// [[Rcpp::depends(RcppParallel)]]
#include <Rcpp.h>
#include <RcppParallel.h>

#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <stdexcept>
#include <string>

#include "kernels.h"

namespace {

struct RcppParallelLoop {
    int threads;
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
        struct Body : public RcppParallel::Worker {
            B& body;
            explicit Body(B& b) : body(b) {}
            void operator()(std::size_t begin, std::size_t end)
            {
                for (std::size_t i = begin; i < end; ++i) body(static_cast<std::ptrdiff_t>(i));
            }
        } worker(body);
        RcppParallel::parallelFor(0, static_cast<std::size_t>(n), worker, 1, threads);
    }
};

long fibTbb(int n)
{
    if (n < 2) return n;
    long a = 0, b = 0;
    tbb::task_group g;
    g.run([&a, n] { a = fibTbb(n - 1); });
    b = fibTbb(n - 2);
    g.wait();
    return a + b;
}

}  // namespace

// One measurement: `k` runs of `workload` at `size` (and `d`) on `threads`
// threads; returns c(seconds per run, check value). See rcppspool.cpp.
// [[Rcpp::export]]
Rcpp::NumericVector bench_rcppparallel(std::string workload, std::string method, double size, int d,
                                       int threads, int k)
{
    if (method != "RcppParallel") throw std::invalid_argument("unknown method " + method);
    const auto n = static_cast<std::ptrdiff_t>(size);
    spoolbench::Measurement m;
    if (workload == "fib") {
        long result = 0;
        tbb::task_arena arena(threads);
        const double t = spoolbench::secondsPerRun(
            [&] { arena.execute([&] { result = fibTbb(static_cast<int>(n)); }); }, k);
        if (result != spoolbench::fibSerial(static_cast<int>(n))) throw std::logic_error("fib(n) is wrong");
        m = {t, static_cast<double>(result)};
    } else if (spoolbench::isLoopWorkload(workload)) {
        m = spoolbench::runLoopWorkload(workload, n, d, k, RcppParallelLoop{threads});
    } else {
        throw std::invalid_argument("unknown workload " + workload + " for RcppParallel");
    }
    return Rcpp::NumericVector::create(m.seconds, m.check);
}
