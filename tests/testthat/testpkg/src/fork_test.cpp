// Entry points behind the tests of fork safety and of nested parallelism
// (tests/testthat/test-fork.R, test-future.R). They use the public headers
// as a user package would, and report what the engine did: which threads ran
// a loop, whether the global pool runs inline, how many threads the process has.
#include <Rcpp.h>

#include <RcppSpool.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <set>
#include <thread>

namespace {

// Records the distinct threads that ran loop bodies.
class ThreadSet {
public:
    void add()
    {
        std::lock_guard<std::mutex> lock(m_);
        ids_.insert(std::this_thread::get_id());
    }
    int size() const { return static_cast<int>(ids_.size()); }
    bool onlyCaller(std::thread::id caller) const { return ids_.size() == 1 && *ids_.begin() == caller; }

private:
    std::mutex m_;
    std::set<std::thread::id> ids_;
};

void sleepMs(double ms)
{
    if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

// Tasks pushed by .spool_busy_start() that have finished (in this process).
std::atomic<int>& busyDone()
{
    static std::atomic<int> done{0};
    return done;
}

}  // namespace

// A parallelFor on the global pool over `n` iterations of `ms` milliseconds
// each; nThreads < 0 means the default (defaultThreads()). Returns how many
// iterations ran, how many distinct threads ran them, the most that ran
// bodies at the same time, whether only the calling thread ran them, and the
// sum of the indices (to check the result).
// [[Rcpp::export(.spool_loop_threads, rng = false)]]
Rcpp::List spoolLoopThreads(int n, double ms, int nThreads)
{
    ThreadSet threads;
    std::atomic<int> iterations{0}, running{0}, maxRunning{0};
    std::atomic<long long> sum{0};
    auto body = [&](std::ptrdiff_t i) {
        threads.add();
        int now = ++running;
        for (int m = maxRunning.load(); now > m && !maxRunning.compare_exchange_weak(m, now);) {
        }
        sleepMs(ms);
        --running;
        iterations++;
        sum += static_cast<long long>(i);
    };
    if (nThreads < 0)
        RcppSpool::parallelFor(0, n, body);
    else
        RcppSpool::parallelFor(0, n, body, static_cast<std::size_t>(nThreads));
    return Rcpp::List::create(Rcpp::Named("iterations") = iterations.load(),
                              Rcpp::Named("threads") = threads.size(),
                              Rcpp::Named("concurrent") = maxRunning.load(),
                              Rcpp::Named("callerOnly") = threads.onlyCaller(std::this_thread::get_id()),
                              Rcpp::Named("sum") = static_cast<double>(sum.load()));
}

// The same on a pool made here, with `nWorkers` workers (< 0: the default,
// defaultThreads()); the pool is destroyed on return.
// [[Rcpp::export(.spool_local_pool_threads, rng = false)]]
Rcpp::List spoolLocalPoolThreads(int nWorkers, int n, double ms)
{
    std::unique_ptr<RcppSpool::ThreadPool> pool(nWorkers < 0 ? new RcppSpool::ThreadPool()
                                                              : new RcppSpool::ThreadPool(nWorkers));
    ThreadSet threads;
    std::atomic<int> iterations{0};
    pool->parallelFor(0, n, [&](std::ptrdiff_t) {
        threads.add();
        sleepMs(ms);
        iterations++;
    });
    pool->wait();
    return Rcpp::List::create(Rcpp::Named("workers") = static_cast<int>(pool->getNumThreads()),
                              Rcpp::Named("iterations") = iterations.load(),
                              Rcpp::Named("threads") = threads.size());
}

// Pushes `nTasks` tasks of `ms` milliseconds to the global pool and returns
// at once, leaving the pool busy (for forking while it works).
// [[Rcpp::export(.spool_busy_start, rng = false)]]
void spoolBusyStart(int nTasks, double ms)
{
    busyDone().store(0);
    for (int i = 0; i < nTasks; ++i)
        RcppSpool::push([ms] {
            sleepMs(ms);
            busyDone()++;
        });
}

// Waits for the global pool (RcppSpool::wait()) and returns how many of the
// tasks of .spool_busy_start() finished in this process.
// [[Rcpp::export(.spool_busy_wait, rng = false)]]
int spoolBusyWait()
{
    RcppSpool::wait();
    return busyDone().load();
}

// A tiny parallel map, the kind of code a worker of a cluster would run:
// the sum over i in [0, n) of sqrt(i) * seed, on nThreads threads (< 0: the
// default), bitwise the same for any number of threads.
// [[Rcpp::export(.spool_scaled_sum, rng = false)]]
double spoolScaledSum(double n, double seed, int nThreads)
{
    const auto len = static_cast<std::ptrdiff_t>(n);
    auto map = [seed](std::ptrdiff_t i) { return std::sqrt(double(i)) * seed; };
    if (nThreads < 0) return RcppSpool::parallelReduce(0, len, 0.0, map, std::plus<double>());
    return RcppSpool::parallelReduce(0, len, 0.0, map, std::plus<double>(), static_cast<std::size_t>(nThreads));
}
