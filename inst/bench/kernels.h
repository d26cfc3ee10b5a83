// The workloads of RcppSpool::benchmark() and the Kendall algorithm of
// kendall_matrix(), in plain C++ (no R, no threading library).
//
// One header for every shared object that takes part in the benchmark: the
// files benchmark() compiles at run time with Rcpp::sourceCpp()
// (inst/bench/rcppspool.cpp, rcppparallel.cpp, rcppthread.cpp) include it
// from the installed bench/ folder, and the package's src/kendall_entries.h
// (kendall_matrix()) from ../inst/bench/. So every method computes exactly
// the same thing on exactly the same data, and only the way the work is
// spread over threads differs.
//
// A method is a "loop": a callable `loop(n, body)` that runs body(i) for every
// i in [0, n) and returns when all are done (serially, on a pool, with OpenMP,
// ...). runLoopWorkload() times the loop-shaped workloads (empty jobs,
// fork-join, kernel density estimates, Kendall's tau matrix, nested loops)
// through it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace spoolbench {

// ---------------------------------------------------------------------------
// Timing and bits the compiler must not optimise away
// ---------------------------------------------------------------------------

//! The body of an "empty job": nothing, but a nothing the compiler has to do
//! once per index (a loop of them is not deleted or merged into one step).
inline void noop(std::ptrdiff_t i) noexcept
{
#if defined(__GNUC__) || defined(__clang__)
    asm volatile("" : : "r"(i) : "memory");
#else
    static volatile std::ptrdiff_t sink;
    sink = i;
#endif
}

//! Seconds taken by one call of `run()`, averaged over `k` back-to-back calls.
template <class F>
double secondsPerRun(F&& run, int k)
{
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < k; ++r) run();
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    return dt.count() / std::max(k, 1);
}

//! What one measurement returns: seconds per run, and a number that depends
//! only on the result of the workload (NaN where there is no result), so that
//! the R side can check every method against the serial one.
struct Measurement {
    double seconds;
    double check;
};

// ---------------------------------------------------------------------------
// Data: the same standard normal sample in every shared object
// ---------------------------------------------------------------------------

//! splitmix64: tiny, fast and the same everywhere (unlike the distributions
//! of <random>, whose output differs between standard libraries).
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next()
    {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    //! Uniform on (0, 1).
    double uniform() { return (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0; }  // 2^53
    //! Standard normal (Box-Muller; one of the pair is discarded).
    double normal()
    {
        const double u1 = uniform(), u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }

private:
    std::uint64_t state_;
};

//! An n x d matrix (column-major) of independent standard normals, generated
//! once per (n, d) and kept for later calls (call from one thread at a time:
//! the R side calls it before any threads start).
inline const std::vector<double>& dataset(std::ptrdiff_t n, std::ptrdiff_t d)
{
    static std::map<std::pair<std::ptrdiff_t, std::ptrdiff_t>, std::vector<double>> cache;
    auto key = std::make_pair(n, d);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    if (cache.size() > 16) cache.clear();  // keep memory bounded over long runs
    std::vector<double> x(static_cast<std::size_t>(n * d));
    SplitMix64 rng(20210531u + static_cast<std::uint64_t>(n) * 7919u + static_cast<std::uint64_t>(d));
    for (auto& v : x) v = rng.normal();
    return cache.emplace(key, std::move(x)).first->second;
}

// ---------------------------------------------------------------------------
// Kernel density estimation (the paper's Figure 4)
// ---------------------------------------------------------------------------

//! Grid points of each estimate, as in the paper.
constexpr int kKdeGrid = 500;

//! Gaussian kernel density estimate of x[0..n) at kKdeGrid equally spaced
//! points from min(x) to max(x), bandwidth by Silverman's rule of thumb
//! (1.06 sd n^(-1/5)). Writes the kKdeGrid values to `out`.
inline void kdeColumn(const double* x, std::ptrdiff_t n, double* out)
{
    double lo = x[0], hi = x[0], mean = 0;
    for (std::ptrdiff_t i = 0; i < n; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
        mean += x[i];
    }
    mean /= n;
    double ss = 0;
    for (std::ptrdiff_t i = 0; i < n; ++i) ss += (x[i] - mean) * (x[i] - mean);
    const double sd = n > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
    const double bw = sd > 0 ? 1.06 * sd * std::pow(static_cast<double>(n), -0.2) : 1.0;
    const double norm = 1.0 / (n * bw * std::sqrt(2 * 3.141592653589793));
    const double step = (hi - lo) / (kKdeGrid - 1);
    for (int g = 0; g < kKdeGrid; ++g) {
        const double at = lo + g * step;
        double s = 0;
        for (std::ptrdiff_t i = 0; i < n; ++i) {
            const double z = (at - x[i]) / bw;
            s += std::exp(-0.5 * z * z);
        }
        out[g] = s * norm;
    }
}

// ---------------------------------------------------------------------------
// Kendall's tau-b by Knight's O(n log n) algorithm (the paper's Figure 5 and
// kendall_matrix())
// ---------------------------------------------------------------------------
//
// Sort the pairs (x_k, y_k) by x, and by y within ties of x. Then every pair
// of observations that is out of order in y (an inversion) is a discordant
// pair, and the inversions are counted while merge-sorting y. With
//   n0 = n(n-1)/2,  n1 = sum over groups of tied x of t(t-1)/2,
//   n2 = the same for y,  n3 = the same for pairs tied in both x and y,
// the number of concordant minus discordant pairs is n0 - n1 - n2 + n3 - 2 D
// and tau-b = (n0 - n1 - n2 + n3 - 2 D) / sqrt((n0 - n1) (n0 - n2)).
// That is what cor(method = "kendall") computes in O(n^2).

//! Sorts y[0..n) ascending (stably) and returns the number of inversions,
//! pairs k < l with y[k] > y[l]. `buf` holds at least n doubles. Equal values
//! are not inversions. Insertion sort on blocks of 32, then bottom-up merges.
inline std::int64_t sortCountInversions(double* y, double* buf, std::ptrdiff_t n)
{
    constexpr std::ptrdiff_t kBlock = 32;
    std::int64_t inv = 0;
    for (std::ptrdiff_t s = 0; s < n; s += kBlock) {
        const std::ptrdiff_t e = std::min(n, s + kBlock);
        for (std::ptrdiff_t k = s + 1; k < e; ++k) {
            const double v = y[k];
            std::ptrdiff_t p = k;
            while (p > s && y[p - 1] > v) {
                y[p] = y[p - 1];
                --p;
            }
            y[p] = v;
            inv += k - p;
        }
    }
    double* src = y;
    double* dst = buf;
    for (std::ptrdiff_t width = kBlock; width < n; width *= 2) {
        for (std::ptrdiff_t l = 0; l < n; l += 2 * width) {
            const std::ptrdiff_t m = std::min(n, l + width), r = std::min(n, l + 2 * width);
            std::ptrdiff_t i = l, j = m, k = l;
            while (i < m && j < r) {
                if (src[j] < src[i]) {
                    dst[k++] = src[j++];
                    inv += m - i;
                } else {
                    dst[k++] = src[i++];
                }
            }
            while (i < m) dst[k++] = src[i++];
            while (j < r) dst[k++] = src[j++];
        }
        std::swap(src, dst);
    }
    if (src != y) std::copy(src, src + n, y);
    return inv;
}

//! sum of t(t-1)/2 over the runs of equal values in sorted v[0..n).
inline std::int64_t tiedPairs(const double* v, std::ptrdiff_t n)
{
    std::int64_t ties = 0;
    for (std::ptrdiff_t s = 0; s < n;) {
        std::ptrdiff_t e = s + 1;
        while (e < n && v[e] == v[s]) ++e;
        const std::int64_t t = e - s;
        ties += t * (t - 1) / 2;
        s = e;
    }
    return ties;
}

//! One variable x sorted once, for pairing with many others (the inner loop
//! of the Kendall matrix sorts each x once, not once per pair).
struct KendallSorted {
    std::vector<std::ptrdiff_t> order;                           // indices sorting x
    std::vector<std::pair<std::ptrdiff_t, std::ptrdiff_t>> ties;  // [begin, end) of each run of tied x (length > 1)
    std::int64_t n1 = 0;                                          // pairs tied in x

    //! Sorts x[0..n) (no NaN in it).
    void prepare(const double* x, std::ptrdiff_t n)
    {
        order.resize(static_cast<std::size_t>(n));
        std::iota(order.begin(), order.end(), std::ptrdiff_t(0));
        std::sort(order.begin(), order.end(), [x](std::ptrdiff_t a, std::ptrdiff_t b) { return x[a] < x[b]; });
        ties.clear();
        n1 = 0;
        for (std::ptrdiff_t s = 0; s < n;) {
            std::ptrdiff_t e = s + 1;
            while (e < n && x[order[e]] == x[order[s]]) ++e;
            if (e - s > 1) {
                ties.emplace_back(s, e);
                const std::int64_t t = e - s;
                n1 += t * (t - 1) / 2;
            }
            s = e;
        }
    }
};

//! Scratch space of one thread for kendallTau().
struct KendallScratch {
    std::vector<double> y, buf;
};

//! Kendall's tau-b of the variable sorted in `xs` (n observations) and
//! y[0..n) (no NaN in it). NaN when x or y is constant.
inline double kendallTau(const KendallSorted& xs, const double* y, std::ptrdiff_t n, KendallScratch& s)
{
    if (n < 2) return std::numeric_limits<double>::quiet_NaN();
    s.y.resize(static_cast<std::size_t>(n));
    s.buf.resize(static_cast<std::size_t>(n));
    double* yy = s.y.data();
    for (std::ptrdiff_t k = 0; k < n; ++k) yy[k] = y[xs.order[k]];
    std::int64_t n3 = 0;
    for (const auto& t : xs.ties) {
        std::sort(yy + t.first, yy + t.second);
        n3 += tiedPairs(yy + t.first, t.second - t.first);
    }
    const std::int64_t discordant = sortCountInversions(yy, s.buf.data(), n);
    const std::int64_t n2 = tiedPairs(yy, n);
    const std::int64_t n0 = static_cast<std::int64_t>(n) * (n - 1) / 2;
    const std::int64_t vx = n0 - xs.n1, vy = n0 - n2;
    if (vx == 0 || vy == 0) return std::numeric_limits<double>::quiet_NaN();
    const double tau = static_cast<double>(n0 - xs.n1 - n2 + n3 - 2 * discordant) /
                       (std::sqrt(static_cast<double>(vx)) * std::sqrt(static_cast<double>(vy)));
    return std::max(-1.0, std::min(1.0, tau));
}

//! Row i of Kendall's tau matrix of the n x d column-major matrix `x` (no
//! NaN): tau(i, j) for all j > i, written to out[i + j d] and out[j + i d].
//! The work of row i is proportional to d - i: the unbalanced inner loop of
//! the paper, whose outer loop over i is the one run in parallel.
inline void kendallRow(const double* x, std::ptrdiff_t n, std::ptrdiff_t d, std::ptrdiff_t i, double* out)
{
    if (i + 1 >= d) return;
    KendallSorted xs;
    xs.prepare(x + i * n, n);
    KendallScratch s;
    for (std::ptrdiff_t j = i + 1; j < d; ++j) {
        const double tau = kendallTau(xs, x + j * n, n, s);
        out[i + j * d] = tau;
        out[j + i * d] = tau;
    }
}

// ---------------------------------------------------------------------------
// Nested loops and recursive tasks
// ---------------------------------------------------------------------------

//! The body of the nested-loop workload: about a microsecond of arithmetic
//! that depends on (i, j).
inline double workUnit(std::ptrdiff_t i, std::ptrdiff_t j)
{
    double s = 0;
    const double base = static_cast<double>(i * 131 + j * 7);
    for (int k = 1; k <= 400; ++k) s += std::sqrt(base + k);
    return s;
}

//! fib(n) by the naive recursion: the serial baseline of the recursive-task
//! workload (whose parallel versions start a task per call).
inline long fibSerial(int n) { return n < 2 ? n : fibSerial(n - 1) + fibSerial(n - 2); }

// ---------------------------------------------------------------------------
// The loop-shaped workloads, for any method
// ---------------------------------------------------------------------------

//! True for the workloads runLoopWorkload() knows.
inline bool isLoopWorkload(const std::string& w)
{
    return w == "empty_jobs" || w == "fork_join" || w == "kde" || w == "kendall" || w == "nested_loops";
}

//! Times `k` runs of workload `w` at `size` (and dimension `d` for kde and
//! kendall) with `loop(n, body)` spreading the iterations over threads.
//!   empty_jobs    `size` empty jobs
//!   fork_join     a blocking loop over `size` empty items (its latency)
//!   kde           density estimates of d variables of `size` observations
//!   kendall       Kendall's tau matrix of d variables of `size` observations,
//!                 the outer loop over rows in parallel
//!   nested_loops  a size x size loop of workUnit(), both levels through `loop`
template <class Loop>
Measurement runLoopWorkload(const std::string& w, std::ptrdiff_t size, std::ptrdiff_t d, int k, Loop&& loop)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (w == "empty_jobs" || w == "fork_join") {
        auto body = [](std::ptrdiff_t i) { noop(i); };
        return {secondsPerRun([&] { loop(size, body); }, k), nan};
    }
    if (w == "kde") {
        const std::vector<double>& x = dataset(size, d);
        std::vector<double> out(static_cast<std::size_t>(kKdeGrid * d));
        auto body = [&](std::ptrdiff_t j) { kdeColumn(x.data() + j * size, size, out.data() + j * kKdeGrid); };
        const double t = secondsPerRun([&] { loop(d, body); }, k);
        return {t, std::accumulate(out.begin(), out.end(), 0.0)};
    }
    if (w == "kendall") {
        const std::vector<double>& x = dataset(size, d);
        std::vector<double> out(static_cast<std::size_t>(d * d), 1.0);
        auto body = [&](std::ptrdiff_t i) { kendallRow(x.data(), size, d, i, out.data()); };
        const double t = secondsPerRun([&] { loop(d, body); }, k);
        return {t, std::accumulate(out.begin(), out.end(), 0.0)};
    }
    if (w == "nested_loops") {
        std::vector<double> out(static_cast<std::size_t>(size * size));
        auto outer = [&](std::ptrdiff_t i) {
            auto inner = [&out, i, size](std::ptrdiff_t j) { out[i * size + j] = workUnit(i, j); };
            loop(size, inner);
        };
        const double t = secondsPerRun([&] { loop(size, outer); }, k);
        return {t, std::accumulate(out.begin(), out.end(), 0.0)};
    }
    throw std::invalid_argument("unknown workload: " + w);
}

}  // namespace spoolbench
