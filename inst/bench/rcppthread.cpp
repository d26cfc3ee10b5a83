// benchmark()'s workloads with RcppThread. Compiled at run time by
// benchmark() with Rcpp::sourceCpp() when RcppThread is installed; kernels.h
// (same folder) holds the workloads themselves.
//
//   RcppThread ThreadPool   push() per item to a ThreadPool(threads) made
//                           before timing, then wait()
//   RcppThread parallelFor  RcppThread::parallelFor(0, n, body, threads)
//   RcppThread Thread       thread creation: RcppThread::Thread
//   RcppThread main thread / worker thread   RcppThread::checkUserInterrupt()
//
// Not run: nested loops (RcppThread's wait() called from a worker returns at
// once, so an inner loop would return before its iterations ran) and
// recursive tasks (a worker blocked in a future's get() does not run other
// tasks, so fib through pushReturn() deadlocks).

// [[Rcpp::depends(RcppThread)]]
#include <Rcpp.h>
#include <RcppThread.h>

#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels.h"

namespace {

std::unique_ptr<RcppThread::ThreadPool> benchPool;

RcppThread::ThreadPool& poolWith(std::size_t threads)
{
    if (!benchPool || benchPool->getNumThreads() != threads) {
        benchPool.reset();
        benchPool.reset(new RcppThread::ThreadPool(threads));
    }
    return *benchPool;
}

struct PoolLoop {
    RcppThread::ThreadPool* pool;
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
        for (std::ptrdiff_t i = 0; i < n; ++i) pool->push([&body, i] { body(i); });
        pool->wait();
    }
};

struct ForLoop {
    std::size_t threads;
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
        RcppThread::parallelFor(0, static_cast<int>(n), [&body](int i) { body(i); }, threads);
    }
};

}  // namespace

// One measurement: `k` runs of `workload` at `size` (and `d`) with `method`
// on `threads` threads; returns c(seconds per run, check value).
// [[Rcpp::export]]
Rcpp::NumericVector bench_rcppthread(std::string workload, std::string method, double size, int d,
                                     int threads, int k)
{
    const auto n = static_cast<std::ptrdiff_t>(size);
    const std::size_t nt = static_cast<std::size_t>(std::max(threads, 1));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    spoolbench::Measurement m;
    if (workload == "thread_create" && method == "RcppThread Thread") {
        auto job = [] { spoolbench::noop(0); };
        m = {spoolbench::secondsPerRun(
                 [&] {
                     std::vector<RcppThread::Thread> ts;
                     for (std::ptrdiff_t i = 0; i < n; ++i) ts.emplace_back(job);
                     for (auto& th : ts) th.join();
                 },
                 k),
             nan};
    } else if (workload == "interrupt_check" && method == "RcppThread main thread") {
        m = {spoolbench::secondsPerRun(
                 [&] { for (std::ptrdiff_t i = 0; i < n; ++i) RcppThread::checkUserInterrupt(); }, k),
             nan};
    } else if (workload == "interrupt_check" && method == "RcppThread worker thread") {
        double t = 0;
        std::thread th([&] {
            try {
                t = spoolbench::secondsPerRun(
                    [&] { for (std::ptrdiff_t i = 0; i < n; ++i) RcppThread::checkUserInterrupt(); }, k);
            } catch (...) {
            }
        });
        th.join();
        RcppThread::checkUserInterrupt();
        m = {t, nan};
    } else if (workload == "nested_loops" || workload == "fib") {
        throw std::invalid_argument(workload + " is not run with RcppThread (see inst/bench/rcppthread.cpp)");
    } else if (spoolbench::isLoopWorkload(workload) && method == "RcppThread ThreadPool") {
        m = spoolbench::runLoopWorkload(workload, n, d, k, PoolLoop{&poolWith(nt)});
    } else if (spoolbench::isLoopWorkload(workload) && method == "RcppThread parallelFor") {
        m = spoolbench::runLoopWorkload(workload, n, d, k, ForLoop{nt});
    } else {
        throw std::invalid_argument("unknown method " + method + " for " + workload);
    }
    return Rcpp::NumericVector::create(m.seconds, m.check);
}

// Ends the ThreadPool kept between measurements.
// [[Rcpp::export]]
void bench_rcppthread_cleanup() { benchPool.reset(); }
