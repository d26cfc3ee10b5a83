// Entry points behind tests/testthat/test-progress.R: ProgressCounter and
// ProgressBar driven from R's main thread, pool workers, RcppSpool::Thread and
// plain std::thread, so that the tests can read what R prints.
#include <Rcpp.h>

#include <RcppSpool.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

void sleepMs(double ms)
{
    if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

// A counter or a bar, built with the constructor a user would write: the
// defaults when `msg` is empty and `stream` is "out".
std::unique_ptr<RcppSpool::ProgressPrinter> makeProgress(const std::string& type, std::size_t total,
                                                         double printEvery, const std::string& msg,
                                                         const std::string& stream)
{
    using RcppSpool::ProgressBar;
    using RcppSpool::ProgressCounter;
    if (stream != "out" && stream != "err") throw std::invalid_argument("stream must be \"out\" or \"err\"");
    const bool err = stream == "err";
    if (type == "counter") {
        if (err) return std::make_unique<ProgressCounter>(total, printEvery, msg.empty() ? "Computing: " : msg,
                                                          RcppSpool::Rcerr);
        if (msg.empty()) return std::make_unique<ProgressCounter>(total, printEvery);
        return std::make_unique<ProgressCounter>(total, printEvery, msg);
    }
    if (type == "bar") {
        if (err && msg.empty()) return std::make_unique<ProgressBar>(total, printEvery, RcppSpool::Rcerr);
        if (err) return std::make_unique<ProgressBar>(total, printEvery, msg, RcppSpool::Rcerr);
        if (msg.empty()) return std::make_unique<ProgressBar>(total, printEvery);
        return std::make_unique<ProgressBar>(total, printEvery, msg);
    }
    throw std::invalid_argument("type must be \"counter\" or \"bar\"");
}

}  // namespace

// `n` items of `ms` milliseconds, each counted once on a ProgressCounter
// (type "counter") or ProgressBar ("bar") that prints every `printEvery`
// seconds to Rcout (stream "out") or Rcerr ("err"). Where the items run:
//   "loop"         RcppSpool::parallelFor with `nThreads` (the caller takes part)
//   "pool"         tasks pushed to a ThreadPool(nThreads), then wait()
//   "main"         a plain loop on R's main thread
//   "thread"       one RcppSpool::Thread (every increment on a worker); join()
//   "stdthread"    one std::thread, joined without servicing R: the final line
//                  comes from the destructor, on the main thread
//   "worker_owned" the object is created, incremented and destroyed inside a
//                  RcppSpool::Thread
// "thread", "stdthread" and "worker_owned" write "[joined]\n" through Rcout
// right after the join and before the object is destroyed. `elapsed` turns
// on setShowElapsed(), `cli` useCli(). Returns the final count.
// [[Rcpp::export(.spool_progress_demo)]]
double spoolProgressDemo(int n, double ms, int nThreads = 2, double printEvery = 1,
                         std::string type = "counter", std::string stream = "out",
                         std::string mode = "loop", std::string msg = "", bool elapsed = false, bool cli = false)
{
    const auto total = static_cast<std::size_t>(n);
    if (mode == "worker_owned") {
        double count = 0;
        RcppSpool::Thread t([&] {
            auto p = makeProgress(type, total, printEvery, msg, stream);
            if (elapsed) p->setShowElapsed();
            if (cli) p->useCli();
            for (int i = 0; i < n; ++i) {
                sleepMs(ms);
                ++*p;
            }
            count = static_cast<double>(p->count());
        });
        t.join();
        RcppSpool::Rcout << "[joined]\n";
        return count;
    }

    auto p = makeProgress(type, total, printEvery, msg, stream);
    if (elapsed) p->setShowElapsed();
    if (cli) p->useCli();
    auto item = [&] {
        sleepMs(ms);
        ++*p;
    };
    if (mode == "loop") {
        RcppSpool::parallelFor(0, n, [&](std::ptrdiff_t) { item(); }, static_cast<std::size_t>(nThreads));
    } else if (mode == "pool") {
        RcppSpool::ThreadPool pool(static_cast<std::size_t>(nThreads));
        for (int i = 0; i < n; ++i) pool.push(item);
        pool.wait();
    } else if (mode == "main") {
        for (int i = 0; i < n; ++i) item();
    } else if (mode == "thread") {
        RcppSpool::Thread t([&] {
            for (int i = 0; i < n; ++i) item();
        });
        t.join();
        RcppSpool::Rcout << "[joined]\n";
    } else if (mode == "stdthread") {
        std::thread t([&] {
            for (int i = 0; i < n; ++i) item();
        });
        t.join();
        RcppSpool::Rcout << "[joined]\n";
    } else {
        throw std::invalid_argument("unknown mode: " + mode);
    }
    return static_cast<double>(p->count());
}

// Nested progress: an outer ProgressCounter ("Outer: ") over `nOuter` items of
// a parallel loop; each item runs an inner parallel loop of `nInner` items of
// `ms` milliseconds with its own ProgressBar ("Inner <k>: "), created and
// destroyed wherever the outer item runs (a worker or the main thread).
// Returns the outer count plus all inner counts.
// [[Rcpp::export(.spool_progress_nested)]]
double spoolProgressNested(int nOuter, int nInner, double ms, int nThreads = 2, double printEvery = 1)
{
    std::atomic<long long> innerTotal{0};
    RcppSpool::ProgressCounter outer(static_cast<std::size_t>(nOuter), printEvery, "Outer: ");
    RcppSpool::parallelFor(0, nOuter, [&](std::ptrdiff_t k) {
        RcppSpool::ProgressBar inner(static_cast<std::size_t>(nInner), printEvery,
                                     "Inner " + std::to_string(k) + ": ");
        RcppSpool::parallelFor(0, nInner, [&](std::ptrdiff_t) {
            sleepMs(ms);
            inner++;
        }, static_cast<std::size_t>(nThreads));
        innerTotal += static_cast<long long>(inner.count());
        ++outer;
    }, static_cast<std::size_t>(nThreads));
    return static_cast<double>(outer.count()) + static_cast<double>(innerTotal.load());
}

// Nanoseconds per increment of a ProgressCounter whose print period is not
// reached, on R's main thread and on a worker thread (RcppSpool::Thread).
// [[Rcpp::export(.spool_progress_cost)]]
Rcpp::NumericVector spoolProgressCost(int n)
{
    using clock = std::chrono::steady_clock;
    auto timeIncrements = [n] {
        RcppSpool::ProgressCounter p(static_cast<std::size_t>(n) + 1, 1e6);
        auto t0 = clock::now();
        for (int i = 0; i < n; ++i) ++p;
        double ns = std::chrono::duration<double, std::nano>(clock::now() - t0).count() / n;
        if (p.count() != static_cast<std::size_t>(n)) throw std::logic_error("miscounted");
        return ns;
    };
    double onMain = timeIncrements();
    double onWorker = 0;
    RcppSpool::Thread t([&] { onWorker = timeIncrements(); });
    t.join();
    return Rcpp::NumericVector::create(Rcpp::Named("main") = onMain, Rcpp::Named("worker") = onWorker);
}
