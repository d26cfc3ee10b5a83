// Entry points behind tests/testthat/test-random.R: a parallel Monte Carlo
// simulation with RcppSpool::Rng seeded by RcppSpool::rngSeed() (so by
// set.seed()), and rngSeed() called where it must not be.
#include <Rcpp.h>

#include <RcppSpool.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

// `paths` random walks of `steps` standard normal steps, one Rng stream per
// path, on `threads` threads; the seed is drawn from R's generator here.
// rng = false: no RNGScope of Rcpp's around it, so that the test sees what
// rngSeed() alone does to R's generator.
// [[Rcpp::export(.spool_random_walks, rng = false)]]
Rcpp::NumericVector randomWalks(double paths, int steps, int threads)
{
    const std::uint64_t seed = RcppSpool::rngSeed();
    const auto n = static_cast<std::ptrdiff_t>(paths);
    std::vector<double> out(static_cast<std::size_t>(n));
    RcppSpool::parallelFor(
        0, n,
        [&](std::ptrdiff_t i) {
            RcppSpool::Rng rng(seed, static_cast<std::uint64_t>(i));
            double x = 0;
            for (int s = 0; s < steps; ++s) x += rng.normal();
            out[static_cast<std::size_t>(i)] = x;
        },
        static_cast<std::size_t>(threads));
    return Rcpp::NumericVector(out.begin(), out.end());
}

// rngSeed() on another thread (an RcppSpool::Thread, whose join() rethrows
// the std::logic_error): the error must reach R with its message.
// [[Rcpp::export(.spool_random_seed_on_worker, rng = false)]]
double randomSeedOnWorker()
{
    double seed = 0;
    RcppSpool::Thread t([&] { seed = static_cast<double>(RcppSpool::rngSeed()); });
    t.join();
    return seed;
}

// Nanoseconds per draw: Rng::normal() (`what` "rng") or R's norm_rand()
// ("r"), `n` draws on this thread, summed so that nothing is optimised away.
// [[Rcpp::export(.spool_random_ns_per_normal, rng = true)]]
Rcpp::NumericVector randomNsPerNormal(double n, std::string what)
{
    const auto count = static_cast<long long>(n);
    double sum = 0;
    const auto t0 = std::chrono::steady_clock::now();
    if (what == "rng") {
        RcppSpool::Rng rng(1, 0);
        for (long long i = 0; i < count; ++i) sum += rng.normal();
    } else {
        for (long long i = 0; i < count; ++i) sum += norm_rand();
    }
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    return Rcpp::NumericVector::create(ns / n, sum);
}
