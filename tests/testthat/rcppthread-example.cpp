// A realistic RcppThread user file, written for RcppThread 2.x and C++11.
//
// test-rcppthread-compat.R compiles it twice: as it is, against RcppThread,
// and after the mechanical migration (include, namespace and depends swapped
// to RcppSpool, nothing else touched), and checks that both give the same
// results. Keep it C++11, keep it free of the RcppThread defects listed in
// DESIGN.md (their behaviour differs on purpose), and make every result
// deterministic.

// [[Rcpp::plugins(cpp11)]]
// [[Rcpp::depends(RcppThread)]]

// Legacy code below prints with std::cout and std::cerr, also from worker
// threads; RcppThread's overrides make that safe. (RCPPTHREAD_OVERRIDE_THREAD
// is left out: with RcppThread 2.4 itself it does not compile, as its own
// headers name std::thread::id after defining the macro.)
#define RCPPTHREAD_OVERRIDE_COUT 1
#define RCPPTHREAD_OVERRIDE_CERR 1

#include <Rcpp.h>
#include <RcppThread.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <future>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

using namespace Rcpp;

// Plain functions, passed by name to push()/pushReturn()/async()/Thread.
double square(double x) { return x * x; }
void addTo(std::atomic<long>* acc, long v) { *acc += v; }
void fillRow(std::vector<double>& out, int i) { out[i] = std::sqrt(static_cast<double>(i)); }
int collatzSteps(long long n)
{
    int steps = 0;
    while (n != 1) {
        n = (n % 2 == 0) ? n / 2 : 3 * n + 1;
        ++steps;
    }
    return steps;
}

// ThreadPool::push with arguments (by value and by std::ref), then wait().
// [[Rcpp::export]]
std::vector<double> poolPush(int n)
{
    std::vector<double> out(n);
    RcppThread::ThreadPool pool(2);
    for (int i = 0; i < n; ++i)
        pool.push(fillRow, std::ref(out), i);
    pool.wait();
    std::vector<double> twice(n);
    for (int i = 0; i < n; ++i)
        pool.push([&twice, &out](int j) { twice[j] = 2 * out[j]; }, i);
    pool.join();
    for (int i = 0; i < n; ++i) out[i] += twice[i];
    return out;
}

// pushReturn() results kept in std::vector<std::future<T>>.
// [[Rcpp::export]]
std::vector<int> poolPushReturn(int n)
{
    RcppThread::ThreadPool pool(3);
    std::vector<std::future<int>> futures(n);
    for (int i = 0; i < n; ++i)
        futures[i] = pool.pushReturn(collatzSteps, i + 1);
    std::vector<int> steps;
    for (auto& f : futures) steps.push_back(f.get());
    std::vector<std::future<void>> done;
    std::atomic<long> total{0};
    for (int i = 0; i < n; ++i)
        done.push_back(pool.pushReturn(addTo, &total, static_cast<long>(steps[i])));
    for (auto& f : done) f.get();
    steps.push_back(static_cast<int>(total.load()));
    pool.join();
    return steps;
}

// An exception thrown in a task is rethrown by the future's get().
// [[Rcpp::export]]
std::string poolPushReturnError()
{
    RcppThread::ThreadPool pool(2);
    auto fut = pool.pushReturn([](int k) -> double {
        if (k > 0) throw std::runtime_error("negative weights are not allowed");
        return 1.0;
    }, 1);
    std::string msg;
    try {
        fut.get();
    } catch (const std::exception& e) {
        msg = e.what();
    }
    pool.join();
    return msg;
}

// ThreadPool::map over a container.
// [[Rcpp::export]]
double poolMap(int n)
{
    std::vector<long> items(n);
    std::iota(items.begin(), items.end(), 1);
    std::atomic<long> acc{0};
    RcppThread::ThreadPool pool;
    pool.map([&acc](long x) { acc += x * x; }, items);
    pool.wait();
    return static_cast<double>(acc.load());
}

// ThreadPool::parallelFor (work stealing and fixed batches) and
// ThreadPool::parallelForEach; the same pool reused across loops.
// [[Rcpp::export]]
List poolLoops(int n)
{
    RcppThread::ThreadPool pool(2);
    std::vector<double> a(n), b(n);
    pool.parallelFor(0, n, [&a](int i) { a[i] = i * 0.5; });
    pool.wait();
    pool.parallelFor(0, a.size(), [&a, &b](int i) { b[i] = a[i] + 1; }, 7);
    pool.wait();
    std::vector<int> c(n, 3);
    pool.parallelForEach(c, [](int& x) { x *= x; });
    pool.wait();
    pool.setNumThreads(1);
    size_t nt = pool.getNumThreads();
    pool.resize(2);
    std::vector<double> d(n);
    pool.parallelFor(0, n, [&d](int i) { d[i] = square(i); }, 3);
    pool.join();
    return List::create(_["a"] = a, _["b"] = b, _["c"] = c, _["d"] = d,
                        _["nt"] = static_cast<int>(nt));
}

// Free parallelFor / parallelForEach on the global pool, with and without
// nThreads / nBatches, a checkUserInterrupt() in the body, and a nested-free
// reduction through a mutex.
// [[Rcpp::export]]
List freeLoops(int n, int nThreads)
{
    std::vector<double> x(n);
    RcppThread::parallelFor(0, n, [&x](int i) {
        RcppThread::checkUserInterrupt(i % 100 == 0);
        x[i] = std::sin(static_cast<double>(i));
    });
    std::vector<double> y(x);
    RcppThread::parallelForEach(y, [](double& v) { v = v * v; }, nThreads);
    std::mutex m;
    long sum = 0;  // an integer: the same whatever the order of the additions
    RcppThread::parallelFor(0, n, [&](int i) {
        std::lock_guard<std::mutex> lk(m);
        sum += static_cast<long>(std::floor(y[i] * 1000));
    }, nThreads, 4);
    std::atomic<int> notInterrupted{0};
    RcppThread::parallelFor(0, n, [&](int i) {
        if (!RcppThread::isInterrupted()) ++notInterrupted;
    }, nThreads);
    return List::create(_["x"] = x, _["y"] = y, _["sum"] = static_cast<double>(sum),
                        _["notInterrupted"] = notInterrupted.load());
}

// Free push / pushReturn / async / wait on the global pool.
// [[Rcpp::export]]
List freeTasks(int n)
{
    std::vector<int> hits(n, 0);
    for (int i = 0; i < n; ++i)
        RcppThread::push([&hits](int j) { hits[j] = j * j; }, i);
    RcppThread::wait();
    std::vector<std::future<double>> sq;
    for (int i = 0; i < n; ++i)
        sq.push_back(RcppThread::pushReturn(square, i));
    double total = 0;
    for (auto& f : sq) total += f.get();
    auto a = RcppThread::async([](int k) { return collatzSteps(k); }, 27);
    auto b = RcppThread::async(square, 1.5);
    double fromAsync = a.get() + b.get();
    RcppThread::wait();
    return List::create(_["hits"] = hits, _["total"] = total, _["async"] = fromAsync);
}

// RcppThread::Thread: construction with arguments, moves into a vector,
// join(), joinable(), get_id(), hardware_concurrency().
// [[Rcpp::export]]
List threads(int nThreads, int n)
{
    std::vector<long> part(nThreads, 0);
    std::vector<RcppThread::Thread> workers;
    for (int t = 0; t < nThreads; ++t) {
        workers.push_back(RcppThread::Thread([&part, n, nThreads](int id) {
            for (int i = id; i < n; i += nThreads) {
                RcppThread::checkUserInterrupt();
                part[id] += i;
            }
        }, t));
    }
    bool allJoinable = true, distinctIds = true;
    for (int t = 0; t < nThreads; ++t) {
        allJoinable = allJoinable && workers[t].joinable();
        for (int u = 0; u < t; ++u)
            distinctIds = distinctIds && workers[t].get_id() != workers[u].get_id();
    }
    for (auto& w : workers) w.join();
    bool noneJoinable = true;
    for (auto& w : workers) noneJoinable = noneJoinable && !w.joinable();
    RcppThread::Thread single(square, 2.0);
    single.join();
    return List::create(_["part"] = part, _["allJoinable"] = allJoinable,
                        _["distinctIds"] = distinctIds, _["noneJoinable"] = noneJoinable,
                        _["cores"] = RcppThread::Thread::hardware_concurrency() > 0);
}

// Printing from workers: RcppThread::Rcout, and (through the overrides)
// std::cout and std::cerr in unmodified legacy code, run on plain std::threads. Each line
// is one `<<`: RcppThread may interleave the pieces of lines of different
// threads.
// [[Rcpp::export]]
int printing(int n)
{
    RcppThread::ThreadPool pool(2);
    for (int i = 0; i < n; ++i)
        pool.push([](int j) { RcppThread::Rcout << "task " + std::to_string(j) + " done\n"; }, i);
    pool.wait();
    RcppThread::Rcout << "main: " << n << " tasks" << std::endl;

    std::vector<std::thread> legacy;
    for (int t = 0; t < 2; ++t)
        legacy.push_back(std::thread([](int k) { std::cout << "legacy thread " + std::to_string(k) + "\n"; }, t));
    for (auto& th : legacy) th.join();
    // RcppThread keeps one buffer for both streams: release the workers'
    // std::cout lines before writing to std::cerr, or they go to stderr.
    RcppThread::Rcout << "";
    std::cerr << "legacy warning on the error stream\n";
    RcppThread::Rcout << "";
    RcppThread::Rcerr << "";
    return n;
}
