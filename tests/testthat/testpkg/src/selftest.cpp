// Entry points behind the package's tests, demo and examples. They exercise
// the public headers from R exactly as a user package would.
#include <Rcpp.h>

#include <RcppSpool.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// [[Rcpp::export(.spool_sum_loop, rng = false)]]
double spoolSumLoop(double n, int nThreads)
{
    const auto len = static_cast<std::ptrdiff_t>(n);
    return RcppSpool::parallelReduce(0, len, 0.0, [](std::ptrdiff_t i) { return std::sqrt(double(i)); },
                                     std::plus<double>(), static_cast<std::size_t>(nThreads));
}

// A loop of `n` iterations of `ms` milliseconds whose body never checks for interrupts.
// [[Rcpp::export(.spool_sleepy_loop, rng = false)]]
int spoolSleepyLoop(int n, double ms, int nThreads)
{
    std::atomic<int> done{0};
    RcppSpool::parallelFor(0, n, [&](std::ptrdiff_t) {
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
        done++;
    }, static_cast<std::size_t>(nThreads));
    return done.load();
}

// Lines through Rcout (or Rcerr) from `nThreads` std::threads, each built by several <<.
// [[Rcpp::export(.spool_print_lines, rng = false)]]
void spoolPrintLines(int nThreads, int nLines, bool toErr)
{
    std::vector<RcppSpool::Thread> threads;
    for (int t = 0; t < nThreads; ++t)
        threads.emplace_back([=] {
            for (int i = 0; i < nLines; ++i) {
                if (toErr)
                    RcppSpool::Rcerr << "thread " << t << " line " << i << " end" << "\n";
                else
                    RcppSpool::Rcout << "thread " << t << " line " << i << " end" << "\n";
            }
        });
    for (auto& th : threads) th.join();
}

// Throws std::runtime_error(msg) from a pool task, a loop body, or a Thread.
// [[Rcpp::export(.spool_throw_from, rng = false)]]
void spoolThrowFrom(std::string where, std::string msg)
{
    if (where == "task") {
        RcppSpool::ThreadPool pool(2);
        pool.push([msg] { throw std::runtime_error(msg); });
        pool.wait();
    } else if (where == "loop") {
        RcppSpool::parallelFor(0, 100, [&](std::ptrdiff_t i) {
            if (i == 37) throw std::runtime_error(msg);
        });
    } else if (where == "thread") {
        RcppSpool::Thread t([msg] { throw std::runtime_error(msg); });
        t.join();
    } else if (where == "async") {
        RcppSpool::async([msg]() -> int { throw std::runtime_error(msg); }).get();
    } else {
        throw std::invalid_argument("unknown place: " + where);
    }
}

// Kernel density estimate of `x` at `grid`, Gaussian kernel, bandwidth `bw`.
// [[Rcpp::export(.spool_kde, rng = false)]]
Rcpp::NumericVector spoolKde(Rcpp::NumericVector x, Rcpp::NumericVector grid, double bw, int nThreads)
{
    const double* xs = x.begin();
    const std::ptrdiff_t n = x.size();
    std::vector<double> out(grid.size());
    std::vector<double> g(grid.begin(), grid.end());
    const double norm = 1.0 / (n * bw * std::sqrt(2 * M_PI));
    RcppSpool::parallelFor(0, static_cast<std::ptrdiff_t>(g.size()), [&](std::ptrdiff_t j) {
        double s = 0;
        for (std::ptrdiff_t i = 0; i < n; ++i) {
            double z = (g[j] - xs[i]) / bw;
            s += std::exp(-0.5 * z * z);
        }
        out[j] = s * norm;
    }, static_cast<std::size_t>(nThreads));
    return Rcpp::NumericVector(out.begin(), out.end());
}

// What the host layer sees on the calling thread (for tests).
// [[Rcpp::export(.spool_host_info, rng = false)]]
Rcpp::List spoolHostInfo()
{
    bool isUserInterrupt = false;
    try {
        std::rethrow_exception(RcppSpool::engine::interruptError());
    } catch (const Rcpp::internal::InterruptedException&) {
        isUserInterrupt = true;
    } catch (...) {
    }
    return Rcpp::List::create(Rcpp::Named("mainThread") = RcppSpool::host::isMainThread(),
                              Rcpp::Named("serviceThread") = RcppSpool::client::onServiceThread(),
                              Rcpp::Named("rcppInterrupt") = isUserInterrupt);
}

// Lines printed from the bodies of a parallel loop (pool workers and the caller).
// [[Rcpp::export(.spool_print_from_loop, rng = false)]]
void spoolPrintFromLoop(int n, int nThreads)
{
    RcppSpool::parallelFor(0, n, [](std::ptrdiff_t i) {
        RcppSpool::Rcout << "item " << i << " of the loop" << std::endl;
    }, static_cast<std::size_t>(nThreads));
}

// A Thread that prints `text` with no newline at the end, then ends.
// [[Rcpp::export(.spool_thread_tail, rng = false)]]
void spoolThreadTail(std::string text)
{
    RcppSpool::Thread t([text] { RcppSpool::Rcout << text; });
    t.join();
}

// Runs `n` loops of `len` iterations each (for memory and repeated-use tests).
// [[Rcpp::export(.spool_many_loops, rng = false)]]
double spoolManyLoops(int n, int len)
{
    double total = 0;
    for (int k = 0; k < n; ++k) {
        std::atomic<long> s{0};
        RcppSpool::parallelFor(0, len, [&](std::ptrdiff_t i) { s += i; });
        total += static_cast<double>(s.load());
    }
    return total;
}
