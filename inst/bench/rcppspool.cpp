// benchmark()'s workloads run serially, with RcppSpool (ThreadPool,
// parallelFor, async, Thread), with std::thread and std::async, and with
// OpenMP where the compiler has it. Compiled at run time by benchmark() with
// Rcpp::sourceCpp() (as a package using RcppSpool would compile it, and with
// $(SHLIB_OPENMP_CXXFLAGS), which R/benchmark.R sets), like rcppparallel.cpp
// and rcppthread.cpp, which run the same workloads with RcppParallel and
// RcppThread; kernels.h (same folder) holds the workloads themselves. R
// (R/benchmark.R) decides what to run and in which order; each call of
// bench_rcppspool() is one measurement of one method on one workload and size.
//
// How each method runs a loop of n items (see also ?benchmark):
//   serial                 a plain for loop
//   RcppSpool parallelFor  RcppSpool::parallelFor(0, n, body, threads)
//   RcppSpool ThreadPool   push() per item to a ThreadPool(threads), then wait()
//   RcppSpool async        RcppSpool::async() per item, then get() each
//   std::thread            `threads` std::threads, one contiguous block each
//   std::async             std::async(std::launch::async) per item, then get()
//   OpenMP                 #pragma omp parallel for (static schedule, the default)
//   OpenMP dynamic         #pragma omp parallel for schedule(dynamic)

// [[Rcpp::depends(RcppSpool)]]
#include <Rcpp.h>

#include <RcppSpool.h>
#include <RcppSpool/RcppParallel.h>

#include <chrono>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels.h"

namespace {

using spoolbench::Measurement;
using spoolbench::secondsPerRun;

// --- loops ---------------------------------------------------------------

struct SerialLoop {
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
        for (std::ptrdiff_t i = 0; i < n; ++i) body(i);
    }
};

struct SpoolForLoop {
    std::size_t threads;
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
        RcppSpool::parallelFor(0, n, body, threads);
    }
};

// The "RcppSpool (RcppParallel API)" method: rcppparallel.cpp's loop, a
// Worker and parallelFor(0, n, worker, 1, threads), compiled against
// RcppSpool's compatibility header instead of RcppParallel.
struct SpoolRcppParallelLoop {
    int threads;
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
        struct Body : public RcppSpool::RcppParallel::Worker {
            B& body;
            explicit Body(B& b) : body(b) {}
            void operator()(std::size_t begin, std::size_t end) override
            {
                for (std::size_t i = begin; i < end; ++i) body(static_cast<std::ptrdiff_t>(i));
            }
        } worker(body);
        RcppSpool::RcppParallel::parallelFor(0, static_cast<std::size_t>(n), worker, 1, threads);
    }
};

// The ThreadPool of the "RcppSpool ThreadPool" method: made before a
// measurement starts (the paper's empty-jobs figure times pushing and
// waiting, not starting threads) and kept for the next one.
std::unique_ptr<RcppSpool::ThreadPool> benchPool;

RcppSpool::ThreadPool& poolWith(std::size_t threads)
{
    if (!benchPool || benchPool->getNumThreads() != threads) {
        benchPool.reset();
        benchPool.reset(new RcppSpool::ThreadPool(threads));
    }
    return *benchPool;
}

struct SpoolPoolLoop {
    RcppSpool::ThreadPool* pool;
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
        // From inside a task of the pool (nested loops), wait() waits for
        // what this task pushed.
        for (std::ptrdiff_t i = 0; i < n; ++i) pool->push([&body, i] { body(i); });
        pool->wait();
    }
};

struct SpoolAsyncLoop {
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
        std::vector<RcppSpool::Future<void>> futures;
        futures.reserve(static_cast<std::size_t>(n));
        for (std::ptrdiff_t i = 0; i < n; ++i) futures.push_back(RcppSpool::async([&body, i] { body(i); }));
        for (auto& f : futures) f.get();
    }
};

struct StdThreadLoop {
    std::size_t threads;
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
        if (n <= 0) return;
        const std::ptrdiff_t t = std::max<std::ptrdiff_t>(1, std::min<std::ptrdiff_t>(threads, n));
        std::vector<std::thread> pool;
        pool.reserve(static_cast<std::size_t>(t));
        for (std::ptrdiff_t k = 0; k < t; ++k) {
            const std::ptrdiff_t b = n * k / t, e = n * (k + 1) / t;
            pool.emplace_back([&body, b, e] {
                for (std::ptrdiff_t i = b; i < e; ++i) body(i);
            });
        }
        for (auto& th : pool) th.join();
    }
};

// One thread per item: R/benchmark.R runs it only where that stays below a
// few thousand threads.
constexpr std::ptrdiff_t kMaxStdAsync = 20000;

struct StdAsyncLoop {
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
        if (n > kMaxStdAsync) throw std::invalid_argument("std::async: too many items for a thread each");
        std::vector<std::future<void>> futures;
        futures.reserve(static_cast<std::size_t>(n));
        for (std::ptrdiff_t i = 0; i < n; ++i) futures.push_back(std::async(std::launch::async, [&body, i] { body(i); }));
        for (auto& f : futures) f.get();
    }
};

#ifdef _OPENMP
struct OmpStaticLoop {
    int threads;
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (std::ptrdiff_t i = 0; i < n; ++i) body(i);
    }
};

struct OmpDynamicLoop {
    int threads;
    template <class B>
    void operator()(std::ptrdiff_t n, B&& body) const
    {
#pragma omp parallel for num_threads(threads) schedule(dynamic)
        for (std::ptrdiff_t i = 0; i < n; ++i) body(i);
    }
};
#endif

// --- recursive tasks: fib(n) with a task per call --------------------------

long fibSpool(int n)
{
    if (n < 2) return n;
    RcppSpool::Future<long> a = RcppSpool::async(fibSpool, n - 1);
    const long b = fibSpool(n - 2);
    return a.get() + b;
}

long fibStdAsync(int n)
{
    if (n < 2) return n;
    std::future<long> a = std::async(std::launch::async, fibStdAsync, n - 1);
    const long b = fibStdAsync(n - 2);
    return a.get() + b;
}

#ifdef _OPENMP
long fibOmp(int n)
{
    if (n < 2) return n;
    long a = 0, b = 0;
#pragma omp task shared(a)
    a = fibOmp(n - 1);
    b = fibOmp(n - 2);
#pragma omp taskwait
    return a + b;
}
#endif

Measurement fibWorkload(const std::string& method, int n, int threads, int k)
{
    long result = 0;
    double t;
    if (method == "serial") {
        t = secondsPerRun([&] { result = spoolbench::fibSerial(n); }, k);
    } else if (method == "RcppSpool async") {
        // The root is a task too, so that the whole recursion runs on the
        // pool's workers (whose get() helps) while R's main thread waits.
        t = secondsPerRun([&] { result = RcppSpool::async(fibSpool, n).get(); }, k);
    } else if (method == "std::async") {
        if (n > 16) throw std::invalid_argument("std::async: fib(n) above 16 starts too many threads");
        t = secondsPerRun([&] { result = fibStdAsync(n); }, k);
#ifdef _OPENMP
    } else if (method == "OpenMP") {
        t = secondsPerRun(
            [&] {
#pragma omp parallel num_threads(threads)
#pragma omp single
                result = fibOmp(n);
            },
            k);
#endif
    } else {
        throw std::invalid_argument("fib: unknown method " + method);
    }
    (void)threads;
    if (result != spoolbench::fibSerial(n)) throw std::logic_error(method + ": fib(n) is wrong");
    return {t, static_cast<double>(result)};
}

// --- thread creation and interrupt checks ------------------------------------

Measurement threadCreateWorkload(const std::string& method, std::ptrdiff_t n, int k)
{
    auto job = [] { spoolbench::noop(0); };
    double t;
    if (method == "std::thread") {
        t = secondsPerRun(
            [&] {
                std::vector<std::thread> ts;
                for (std::ptrdiff_t i = 0; i < n; ++i) ts.emplace_back(job);
                for (auto& th : ts) th.join();
            },
            k);
    } else if (method == "RcppSpool Thread") {
        t = secondsPerRun(
            [&] {
                std::vector<RcppSpool::Thread> ts;
                for (std::ptrdiff_t i = 0; i < n; ++i) ts.emplace_back(job);
                for (auto& th : ts) th.join();
            },
            k);
    } else {
        throw std::invalid_argument("thread_create: unknown method " + method);
    }
    return {t, std::numeric_limits<double>::quiet_NaN()};
}

Measurement interruptWorkload(const std::string& method, std::ptrdiff_t n, int k)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (method == "RcppSpool main thread") {
        return {secondsPerRun([&] { for (std::ptrdiff_t i = 0; i < n; ++i) RcppSpool::checkUserInterrupt(); }, k), nan};
    }
    if (method == "Rcpp main thread") {
        return {secondsPerRun([&] { for (std::ptrdiff_t i = 0; i < n; ++i) Rcpp::checkUserInterrupt(); }, k), nan};
    }
    if (method == "RcppSpool worker thread") {
        // Timed on the worker itself, so thread creation is not counted. An
        // interrupt seen there must not escape the thread: it is rethrown by
        // the main thread's own check below.
        double t = 0;
        std::thread th([&] {
            try {
                t = secondsPerRun([&] { for (std::ptrdiff_t i = 0; i < n; ++i) RcppSpool::checkUserInterrupt(); }, k);
            } catch (...) {
            }
        });
        th.join();
        RcppSpool::checkUserInterrupt();
        return {t, nan};
    }
    throw std::invalid_argument("interrupt_check: unknown method " + method);
}

template <class Loop>
Measurement loopWorkload(const std::string& workload, std::ptrdiff_t size, std::ptrdiff_t d, int k, Loop&& loop)
{
    return spoolbench::runLoopWorkload(workload, size, d, k, loop);
}

}  // namespace

// One measurement for benchmark(): `k` runs of `workload` at `size` (and `d`)
// with `method` on `threads` threads; returns c(seconds per run, check value).
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector bench_rcppspool(std::string workload, std::string method, double size, int d, int threads,
                                    int k)
{
    const auto n = static_cast<std::ptrdiff_t>(size);
    const std::size_t nt = static_cast<std::size_t>(std::max(threads, 1));
    Measurement m;
    if (workload == "thread_create") {
        m = threadCreateWorkload(method, n, k);
    } else if (workload == "interrupt_check") {
        m = interruptWorkload(method, n, k);
    } else if (workload == "fib") {
        m = fibWorkload(method, static_cast<int>(n), threads, k);
    } else if (!spoolbench::isLoopWorkload(workload)) {
        throw std::invalid_argument("unknown workload " + workload);
    } else if (method == "serial") {
        m = loopWorkload(workload, n, d, k, SerialLoop{});
    } else if (method == "RcppSpool parallelFor") {
        m = loopWorkload(workload, n, d, k, SpoolForLoop{nt});
    } else if (method == "RcppSpool ThreadPool") {
        m = loopWorkload(workload, n, d, k, SpoolPoolLoop{&poolWith(nt)});
    } else if (method == "RcppSpool async") {
        m = loopWorkload(workload, n, d, k, SpoolAsyncLoop{});
    } else if (method == "RcppSpool (RcppParallel API)") {
        m = loopWorkload(workload, n, d, k, SpoolRcppParallelLoop{static_cast<int>(nt)});
    } else if (method == "std::thread") {
        m = loopWorkload(workload, n, d, k, StdThreadLoop{nt});
    } else if (method == "std::async") {
        m = loopWorkload(workload, n, d, k, StdAsyncLoop{});
#ifdef _OPENMP
    } else if (method == "OpenMP") {
        m = loopWorkload(workload, n, d, k, OmpStaticLoop{static_cast<int>(nt)});
    } else if (method == "OpenMP dynamic") {
        m = loopWorkload(workload, n, d, k, OmpDynamicLoop{static_cast<int>(nt)});
#endif
    } else {
        throw std::invalid_argument("unknown method " + method + " for " + workload);
    }
    return Rcpp::NumericVector::create(m.seconds, m.check);
}

// How much faster `threads` threads do a fixed amount of arithmetic than one
// thread (about `seconds` of it): close to `threads` on an idle machine with
// that many cores, less when other processes compete for them. benchmark()
// reports it before and after measuring, to tell how far the machine's load
// limited the speedups.
// [[Rcpp::export(rng = false)]]
double bench_capacity(int threads, double seconds)
{
    static volatile double sink;
    auto work = [](long n) {
        double s = 0;
        for (long i = 0; i < n; ++i) s += static_cast<double>(i) * 1e-9 + s * 1e-12;
        return s;
    };
    const long probe = 2000000;
    const double tProbe = secondsPerRun([&] { sink = work(probe); }, 1);
    const long n = std::max<long>(probe, static_cast<long>(probe * seconds / std::max(tProbe, 1e-9)));
    const double tSerial = secondsPerRun([&] { sink = work(n); }, 1);
    const int t = std::max(threads, 1);
    const double tParallel = secondsPerRun(
        [&] {
            std::vector<std::thread> ts;
            for (int k = 0; k < t; ++k) ts.emplace_back([&] { sink = work(n / t); });
            for (auto& th : ts) th.join();
        },
        1);
    (void)sink;
    return tSerial / tParallel;
}

// Whether this file was compiled with OpenMP.
// [[Rcpp::export(rng = false)]]
bool bench_has_openmp()
{
#ifdef _OPENMP
    return true;
#else
    return false;
#endif
}

// Ends the ThreadPool kept between measurements.
// [[Rcpp::export(rng = false)]]
void bench_rcppspool_cleanup()
{
    benchPool.reset();
}
