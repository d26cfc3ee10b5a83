// onMainThread(): R callbacks from the workers of a parallel loop
// (tests/testthat/test-main-thread.R).
#include <Rcpp.h>
#include <RcppSpool.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

// A loop over n items; for every `every`-th item the worker asks R's main
// thread for fun(i) (through Rcpp::Function, or R's C API when raw), the
// other items compute -i. Returns the values and, per call, the time from
// the worker's request to its result (microseconds).
// [[Rcpp::export(".spool_main_calls")]]
Rcpp::List spoolMainCalls(Rcpp::Function fun, double n, int every, int nThreads, bool raw = false)
{
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
    std::vector<double> values(static_cast<std::size_t>(count));
    std::vector<double> latency(static_cast<std::size_t>(count), -1);
    SEXP f = fun;
    RcppSpool::parallelFor(
        0, count,
        [&](std::ptrdiff_t i) {
            if (i % every != 0) {
                values[i] = -static_cast<double>(i);
                return;
            }
            const auto t0 = std::chrono::steady_clock::now();
            if (raw) {
                // R's C API: an R error jumps out of this lambda (caught by onMainThread).
                values[i] = RcppSpool::onMainThread([f, i] {
                                SEXP call = PROTECT(Rf_lang2(f, Rf_ScalarReal(static_cast<double>(i))));
                                double v = Rf_asReal(Rf_eval(call, R_GlobalEnv));
                                UNPROTECT(1);
                                return v;
                            }).get();
            } else {
                values[i] = RcppSpool::onMainThread([&fun, i] {
                                return Rcpp::as<double>(fun(static_cast<double>(i)));
                            }).get();
            }
            latency[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        },
        static_cast<std::size_t>(nThreads));
    std::vector<double> lat;
    for (double x : latency)
        if (x >= 0) lat.push_back(x);
    return Rcpp::List::create(Rcpp::Named("values") = values, Rcpp::Named("latency_us") = lat);
}

// onMainThread() called on the main thread itself runs at once, and one
// made from a std::thread outside any pool is run while the main thread
// waits in a Thread's join.
// [[Rcpp::export(".spool_main_call_here")]]
Rcpp::NumericVector spoolMainCallHere(Rcpp::Function fun)
{
    double here = RcppSpool::onMainThread([&fun] { return Rcpp::as<double>(fun(1.0)); }).get();
    double fromThread = 0;
    RcppSpool::Thread t([&] { fromThread = RcppSpool::onMainThread([&fun] { return Rcpp::as<double>(fun(2.0)); }).get(); });
    t.join();
    return Rcpp::NumericVector::create(here, fromThread);
}
