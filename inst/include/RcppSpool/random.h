// Random numbers in parallel loops: one stream per index, reproducible for
// any number of threads, seeded from R's generator (set.seed()).
//
//     const std::uint64_t seed = RcppSpool::rngSeed();   // main thread: R's RNG decides it
//     RcppSpool::parallelFor(0, n, [&](ptrdiff_t i) {
//         RcppSpool::Rng rng(seed, i);                   // the stream of index i
//         out[i] = rng.normal();
//     });
//
// Rng is a counter-based generator (Philox4x32-10, Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC'11): the n-th number of stream i is
// a function of (seed, i, n) alone, so it does not matter which thread runs
// index i, in which order, or how many threads there are. Its distributions
// (uniform, normal, exponential, uniformInt) use only integer operations and
// IEEE-754 +, -, *, / and sqrt (each product is rounded on its own, never
// fused into an FMA, and the logarithm is our own): they give bitwise the same
// numbers with every compiler, standard library and platform.
//
// Rng also is a std UniformRandomBitGenerator, so std::<random>'s
// distributions accept it; their algorithms differ between standard libraries
// (libstdc++, libc++, MSVC's), so their numbers are reproducible on one
// platform only.
//
// R's own unif_rand()/norm_rand() may only be called on R's main thread, and
// from a parallel loop the order of the calls would depend on scheduling:
// their numbers would change from run to run even after set.seed().
#pragma once

#include "abi.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "host/main_thread.h"
#include "host/rng_seed.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! The Philox4x32-10 block function (Random123's philox4x32, 10 rounds): maps
//! a 128-bit counter and a 64-bit key to 128 random bits. A bijection of the
//! counter for each key: distinct counters never give the same block.
constexpr std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> ctr,
                                                     std::array<std::uint32_t, 2> key) noexcept
{
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {  // the Weyl key schedule
            key[0] += 0x9E3779B9u;
            key[1] += 0xBB67AE85u;
        }
        const std::uint64_t p0 = std::uint64_t(0xD2511F53u) * ctr[0];
        const std::uint64_t p1 = std::uint64_t(0xCD9E8D57u) * ctr[2];
        ctr = {std::uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], std::uint32_t(p1),
               std::uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], std::uint32_t(p0)};
    }
    return ctr;
}

namespace random_detail {

//! `x` rounded to a double where the compiler can see it: a product passed
//! through here cannot be fused with a following addition into an FMA (GCC
//! fuses across statements by default, clang within one, where the target has
//! FMA: arm64, or x86 with -march=native), which would change the last bit.
inline double rounded(double x) noexcept
{
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__SSE2_MATH__))
    __asm__("" : "+x"(x));
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    __asm__("" : "+w"(x));
#else
    volatile double v = x;
    x = v;
#endif
    return x;
}

//! a * b, rounded (never part of an FMA).
inline double mul(double a, double b) noexcept { return rounded(a * b); }

//! The natural logarithm of a positive, finite, normal double, by fdlibm's
//! method (e_log.c: x = 2^k (1 + f), log(1 + f) = f - s (f - R(s^2)) with
//! s = f / (2 + f) and a degree-14 minimax polynomial R; error below 1 ulp),
//! with only +, -, *, / on doubles: the same bits on every platform, where
//! std::log is as exact as each platform's libm makes it.
inline double log(double x) noexcept
{
    constexpr double ln2Hi = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000
    constexpr double ln2Lo = 1.90821492927058770002e-10;  // 0x3dea39ef35793c76
    constexpr double lg1 = 6.666666666666735130e-01, lg2 = 3.999999999940941908e-01,
                     lg3 = 2.857142874366239149e-01, lg4 = 2.222219843214978396e-01,
                     lg5 = 1.818357216161805012e-01, lg6 = 1.531383769920937332e-01,
                     lg7 = 1.479819860511658591e-01;

    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    std::int32_t hx = static_cast<std::int32_t>(bits >> 32);
    std::int32_t k = (hx >> 20) - 1023;
    hx &= 0x000fffff;
    // The mantissa into [sqrt(2)/2, sqrt(2)): x or x/2.
    const std::int32_t i = (hx + 0x95f64) & 0x100000;
    bits = (std::uint64_t(std::uint32_t(hx | (i ^ 0x3ff00000))) << 32) | (bits & 0xffffffffu);
    std::memcpy(&x, &bits, sizeof x);
    k += i >> 20;
    const double f = x - 1.0;
    const double dk = k;
    if ((0x000fffff & (2 + hx)) < 3) {  // |f| < 2^-20
        if (f == 0.0) return k == 0 ? 0.0 : mul(dk, ln2Hi) + mul(dk, ln2Lo);
        const double r = mul(mul(f, f), 0.5 - mul(0.33333333333333333, f));
        return k == 0 ? f - r : mul(dk, ln2Hi) - ((r - mul(dk, ln2Lo)) - f);
    }
    const double s = f / (2.0 + f);
    const double z = mul(s, s);
    const double w = mul(z, z);
    const double t1 = mul(w, lg2 + mul(w, lg4 + mul(w, lg6)));
    const double t2 = mul(z, lg1 + mul(w, lg3 + mul(w, lg5 + mul(w, lg7))));
    const double r = t2 + t1;
    if (((hx - 0x6147a) | (0x6b851 - hx)) > 0) {
        const double hfsq = mul(mul(0.5, f), f);
        return k == 0 ? f - (hfsq - mul(s, hfsq + r))
                      : mul(dk, ln2Hi) - ((hfsq - (mul(s, hfsq + r) + mul(dk, ln2Lo))) - f);
    }
    return k == 0 ? f - mul(s, f - r) : mul(dk, ln2Hi) - ((mul(s, f - r) - mul(dk, ln2Lo)) - f);
}

//! The high 64 bits of a * b (portable: no __int128).
constexpr std::uint64_t mulHi(std::uint64_t a, std::uint64_t b) noexcept
{
    const std::uint64_t aLo = a & 0xffffffffu, aHi = a >> 32, bLo = b & 0xffffffffu, bHi = b >> 32;
    const std::uint64_t ll = aLo * bLo, lh = aLo * bHi, hl = aHi * bLo, hh = aHi * bHi;
    const std::uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

}  // namespace random_detail

//! A random number stream for one index of a parallel loop: Philox4x32-10
//! keyed by a 64-bit seed, with the index in the counter.
//!
//! `Rng(seed, i)` is the stream of index i: its numbers depend on (seed, i)
//! and on how many were drawn from it, never on the thread, so a loop that
//! makes one Rng per index gives the same results for any number of threads
//! (and any order). Streams of distinct indices (or seeds) are distinct
//! blocks of the same bijection; each holds 2^65 numbers. An Rng is a small
//! value (56 bytes on 64-bit platforms, no allocation): make it in the loop
//! body, or keep one per index; do not share one between threads without a
//! lock.
//!
//! The numbers: operator() gives 64 bits; block n of stream i is
//! philox4x32_10({n_lo, n_hi, i_lo, i_hi}, {seed_lo, seed_hi}) = {w0, w1, w2, w3},
//! which gives (w1 << 32 | w0), then (w3 << 32 | w2).
//!
//! A UniformRandomBitGenerator: std::uniform_real_distribution and the
//! others accept it (reproducible on one standard library only: their
//! algorithms differ); its own distributions below are bitwise the same
//! everywhere.
class Rng {
public:
    //! What operator()() returns: 64 random bits (a UniformRandomBitGenerator).
    using result_type = std::uint64_t;

    //! The stream `stream` (e.g. a loop index) of the generator seeded with
    //! `seed` (e.g. rngSeed(), drawn from R's generator).
    constexpr Rng(std::uint64_t seed, std::uint64_t stream) noexcept
        : key_{std::uint32_t(seed), std::uint32_t(seed >> 32)}, stream_(stream)
    {}

    //! The smallest value of operator(): 0.
    static constexpr result_type min() noexcept { return 0; }
    //! The largest value of operator(): 2^64 - 1.
    static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }

    //! The next 64 random bits of this stream.
    result_type operator()() noexcept
    {
        if (next_ == 2) refill();
        return buffer_[next_++];
    }

    //! Uniform on (0, 1), never 0 nor 1: k / 2^53 for a uniform k in
    //! [1, 2^53) (53 random bits; a draw of k = 0, chance 2^-53, is redrawn).
    double uniform() noexcept
    {
        for (;;) {
            const std::uint64_t k = (*this)() >> 11;
            if (k != 0) return static_cast<double>(k) * 0x1.0p-53;
        }
    }

    //! Standard normal, by Marsaglia's polar method: v1, v2 uniform on
    //! [-1, 1) (multiples of 2^-52) until s = v1^2 + v2^2 is in (0, 1) (chance
    //! pi/4), then v1 * sqrt(-2 log(s) / s) now and v2 * sqrt(-2 log(s) / s)
    //! at the next call. The logarithm is our own (see random_detail::log),
    //! sqrt is IEEE-exact: the same bits on every platform.
    double normal() noexcept
    {
        if (hasSpare_) {
            hasSpare_ = false;
            return spare_;
        }
        double v1, v2, s;
        do {
            v1 = signedUniform();
            v2 = signedUniform();
            s = random_detail::mul(v1, v1) + random_detail::mul(v2, v2);
        } while (s >= 1.0 || s == 0.0);
        const double factor = std::sqrt(-2.0 * random_detail::log(s) / s);
        spare_ = v2 * factor;
        hasSpare_ = true;
        return v1 * factor;
    }

    //! Normal with mean `mean` and standard deviation `sd`: mean + sd * normal().
    double normal(double mean, double sd) noexcept { return random_detail::mul(sd, normal()) + mean; }

    //! Exponential with rate 1 (mean 1): -log(uniform()), in (0, 36.8].
    double exponential() noexcept { return -random_detail::log(uniform()); }

    //! Exponential with rate `rate` (mean 1 / rate).
    double exponential(double rate) noexcept { return exponential() / rate; }

    //! Uniform on the integers 0, 1, ..., n - 1, without bias (Lemire's
    //! multiply-and-reject: one 64-bit draw, rarely more). Throws
    //! std::invalid_argument when n is 0.
    std::uint64_t uniformInt(std::uint64_t n)
    {
        if (n == 0) throw std::invalid_argument("RcppSpool::Rng::uniformInt(n): n must be at least 1");
        std::uint64_t x = (*this)();
        std::uint64_t low = x * n;  // the low 64 bits of x * n
        if (low < n) {
            const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
            while (low < threshold) {
                x = (*this)();
                low = x * n;
            }
        }
        return random_detail::mulHi(x, n);
    }

    //! The seed this stream was made with.
    constexpr std::uint64_t seed() const noexcept { return (std::uint64_t(key_[1]) << 32) | key_[0]; }
    //! The stream's index.
    constexpr std::uint64_t stream() const noexcept { return stream_; }

private:
    void refill() noexcept
    {
        const auto w = philox4x32_10({std::uint32_t(block_), std::uint32_t(block_ >> 32), std::uint32_t(stream_),
                                      std::uint32_t(stream_ >> 32)},
                                     key_);
        buffer_[0] = (std::uint64_t(w[1]) << 32) | w[0];
        buffer_[1] = (std::uint64_t(w[3]) << 32) | w[2];
        ++block_;
        next_ = 0;
    }

    //! Uniform on [-1, 1): (k - 2^52) / 2^52 for 53 random bits k (exact).
    double signedUniform() noexcept
    {
        const std::int64_t k = static_cast<std::int64_t>((*this)() >> 11) - (std::int64_t(1) << 52);
        return static_cast<double>(k) * 0x1.0p-52;
    }

    std::array<std::uint32_t, 2> key_;
    std::uint64_t stream_;
    std::uint64_t block_ = 0;
    std::uint64_t buffer_[2] = {0, 0};
    unsigned next_ = 2;  // 2: the buffer is used up
    bool hasSpare_ = false;
    double spare_ = 0;
};

//! A seed for Rng, drawn on the main thread before a parallel loop.
//!
//! In R it takes 64 bits from R's random number generator (GetRNGstate(),
//! two unif_rand(), PutRNGstate(), as R's runif() does): set.seed()
//! determines it, and R's stream advances, so that the next call (or R's
//! next runif()) gives other numbers. Do not call it between your own
//! GetRNGstate() and PutRNGstate() after drawing from R's generator there
//! (as an Rcpp function with rng = true does around its body): it reloads
//! .Random.seed, and would repeat numbers already drawn (call it first).
//! Without R (RCPPSPOOL_STANDALONE) it takes 64 bits from std::random_device:
//! another seed on each call; pass a fixed seed to Rng for repeatable runs.
//!
//! Only on the main thread (R's: R's generator is not thread-safe); on any
//! other thread it throws std::logic_error (an R error when it reaches R).
inline std::uint64_t rngSeed()
{
    if (!host::isMainThread())
        throw std::logic_error(
            "RcppSpool::rngSeed() was called from a worker thread; call it on R's main thread before "
            "the parallel loop and give the loop body RcppSpool::Rng(seed, i)");
    return host::drawSeed();
}

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
