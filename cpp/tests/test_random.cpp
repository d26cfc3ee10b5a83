// Rng (Philox4x32-10 streams per index), its portable distributions and
// rngSeed() (standalone: std::random_device, main thread only).
#include <RcppSpool.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using RcppSpool::Rng;

// Mean and variance of `n` draws of `draw`.
template <class F>
std::pair<double, double> moments(std::size_t n, F draw)
{
    double sum = 0, sum2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double x = draw();
        sum += x;
        sum2 += x * x;
    }
    const double mean = sum / n;
    return {mean, sum2 / n - mean * mean};
}

// The distance in units in the last place between two positive doubles.
std::int64_t ulpDistance(double a, double b)
{
    std::int64_t ia, ib;
    std::memcpy(&ia, &a, sizeof a);
    std::memcpy(&ib, &b, sizeof b);
    return ia > ib ? ia - ib : ib - ia;
}

// A small Monte Carlo simulation: `paths` random walks of `steps` normal
// steps (plus an exponential and a uniform integer per path), one Rng per
// path, on `threads` threads.
std::vector<double> simulate(std::uint64_t seed, std::ptrdiff_t paths, int steps, std::size_t threads)
{
    std::vector<double> out(static_cast<std::size_t>(paths));
    RcppSpool::parallelFor(
        0, paths,
        [&](std::ptrdiff_t i) {
            Rng rng(seed, static_cast<std::uint64_t>(i));
            double x = 0;
            for (int s = 0; s < steps; ++s) x += rng.normal();
            out[static_cast<std::size_t>(i)] = x + rng.exponential() + static_cast<double>(rng.uniformInt(10));
        },
        threads);
    return out;
}

}  // namespace

// Random123's tests/kat_vectors, the three "philox4x32 10" lines
// (counter, key -> block).
TEST(Philox, KnownAnswerVectors)
{
    using C = std::array<std::uint32_t, 4>;
    using K = std::array<std::uint32_t, 2>;
    EXPECT_EQ(RcppSpool::philox4x32_10(C{0, 0, 0, 0}, K{0, 0}), (C{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
    EXPECT_EQ(RcppSpool::philox4x32_10(C{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, K{0xffffffff, 0xffffffff}),
              (C{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
    EXPECT_EQ(RcppSpool::philox4x32_10(C{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, K{0xa4093822, 0x299f31d0}),
              (C{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
    // constexpr: usable at compile time.
    static_assert(RcppSpool::philox4x32_10(C{0, 0, 0, 0}, K{0, 0})[0] == 0x6627e8d5u, "Philox KAT");
}

TEST(Rng, OutputsAreTheDocumentedBlocks)
{
    const std::uint64_t seed = 0x299f31d0a4093822ull, stream = 0x0370734413198a2eull;
    Rng rng(seed, stream);
    EXPECT_EQ(rng.seed(), seed);
    EXPECT_EQ(rng.stream(), stream);
    for (std::uint32_t block = 0; block < 3; ++block) {
        const auto w = RcppSpool::philox4x32_10({block, 0, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0});
        EXPECT_EQ(rng(), (std::uint64_t(w[1]) << 32 | w[0])) << "block " << block;
        EXPECT_EQ(rng(), (std::uint64_t(w[3]) << 32 | w[2])) << "block " << block;
    }
}

TEST(Rng, IsAUniformRandomBitGenerator)
{
    static_assert(std::is_same<Rng::result_type, std::uint64_t>::value, "64-bit results");
    static_assert(Rng::min() == 0 && Rng::max() == std::numeric_limits<std::uint64_t>::max(), "full range");
#if __cplusplus >= 202002L
    static_assert(std::uniform_random_bit_generator<Rng>);
#endif
    Rng a(7, 3), b(7, 3);
    std::uniform_real_distribution<double> unif(0.0, 1.0);
    std::normal_distribution<double> norm(0.0, 1.0);
    double sum = 0;
    for (int i = 0; i < 1000; ++i) {
        const double u = unif(a);
        EXPECT_GE(u, 0.0);
        EXPECT_LT(u, 1.0);
        EXPECT_EQ(u, unif(b)) << "the same stream, the same numbers (on one standard library)";
        sum += u;
    }
    EXPECT_NEAR(sum / 1000, 0.5, 0.05);
    const double z = norm(a);
    EXPECT_TRUE(std::isfinite(z));
    std::array<int, 4> cards{1, 2, 3, 4};
    std::shuffle(cards.begin(), cards.end(), a);
    EXPECT_TRUE(std::is_permutation(cards.begin(), cards.end(), std::array<int, 4>{1, 2, 3, 4}.begin()));
}

TEST(Rng, StreamsOfOtherIndicesAndSeedsDiffer)
{
    std::set<std::uint64_t> first;
    for (std::uint64_t seed : {0ull, 1ull, 2ull, 0xffffffffffffffffull}) {
        for (std::uint64_t i = 0; i < 1000; ++i) first.insert(Rng(seed, i)());
    }
    EXPECT_EQ(first.size(), 4000u) << "first numbers of 4 seeds x 1000 streams are all distinct";
    // Index 2^32 is not index 0: both halves of the index are used.
    EXPECT_NE(Rng(1, 0)(), Rng(1, std::uint64_t(1) << 32)());
    EXPECT_NE(Rng(1, 0)(), Rng(std::uint64_t(1) << 32 | 1, 0)());
    // The same (seed, index) is the same stream; a copy continues where the original is.
    Rng a(5, 9), b(5, 9);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(a(), b());
    a.normal();
    Rng c = a;
    EXPECT_EQ(a.normal(), c.normal());
    EXPECT_EQ(a(), c());
}

// The same bits with every compiler, standard library and platform: these
// values come from g++/libstdc++ on x86-64; the clang/libc++ and mingw-w64
// builds must give them too (and -march=native, where products could be
// fused into FMAs, must not change them).
TEST(Rng, DistributionsGiveTheSameBitsEverywhere)
{
    Rng rng(42, 7);
    EXPECT_EQ(rng.uniform(), 0x1.caa82198cfdcdp-1);
    EXPECT_EQ(rng.uniform(), 0x1.55ce634db1fb2p-2);
    EXPECT_EQ(rng.uniform(), 0x1.803d865b9777ap-2);
    EXPECT_EQ(rng.uniform(), 0x1.6476c1cc7e6fcp-3);
    EXPECT_EQ(rng.normal(), -0x1.1febc28ceea31p-8);
    EXPECT_EQ(rng.normal(), 0x1.42fadf18eb38ap-2);
    EXPECT_EQ(rng.normal(), -0x1.84a7f4f0f7424p-2);
    EXPECT_EQ(rng.normal(), 0x1.7d6b4b4ccd3a1p-2);
    EXPECT_EQ(rng.exponential(), 0x1.6445f25f615a1p-4);
    EXPECT_EQ(rng.exponential(), 0x1.b70fdfd9812a6p-1);
    EXPECT_EQ(rng.exponential(), 0x1.9cab9341aa66p-1);
    EXPECT_EQ(rng.exponential(), 0x1.e9231952a909ap+1);
    EXPECT_EQ(rng.uniformInt(1000), 541u);
    EXPECT_EQ(rng.uniformInt(1000), 199u);
    EXPECT_EQ(rng.uniformInt(1000), 327u);
    EXPECT_EQ(rng.uniformInt(1000), 860u);
}

TEST(Rng, UniformIsInTheOpenIntervalWithTheRightMoments)
{
    Rng rng(123, 0);
    double lo = 1, hi = 0;
    const auto m = moments(1000000, [&] {
        const double u = rng.uniform();
        lo = std::min(lo, u);
        hi = std::max(hi, u);
        return u;
    });
    EXPECT_GT(lo, 0.0);
    EXPECT_LT(hi, 1.0);
    EXPECT_NEAR(m.first, 0.5, 0.002);         // sd of the mean: 0.0003
    EXPECT_NEAR(m.second, 1.0 / 12, 0.001);   // sd of the variance: about 0.00008
    // 53 bits: a multiple of 2^-53.
    for (int i = 0; i < 1000; ++i) {
        const double u = rng.uniform() * 0x1.0p53;
        EXPECT_EQ(u, std::floor(u));
    }
}

TEST(Rng, NormalAndExponentialHaveTheRightMoments)
{
    Rng rng(99, 1);
    const auto n = moments(1000000, [&] { return rng.normal(); });
    EXPECT_NEAR(n.first, 0.0, 0.005);   // sd of the mean: 0.001
    EXPECT_NEAR(n.second, 1.0, 0.007);  // sd of the variance: 0.0014
    std::size_t inside = 0;
    for (int i = 0; i < 1000000; ++i) inside += std::fabs(rng.normal()) < 1.959963984540054;
    EXPECT_NEAR(inside / 1e6, 0.95, 0.002);
    const auto e = moments(1000000, [&] { return rng.exponential(); });
    EXPECT_NEAR(e.first, 1.0, 0.005);
    EXPECT_NEAR(e.second, 1.0, 0.02);
    const auto shifted = moments(100000, [&] { return rng.normal(10.0, 2.0); });
    EXPECT_NEAR(shifted.first, 10.0, 0.03);
    EXPECT_NEAR(shifted.second, 4.0, 0.1);
    EXPECT_NEAR(moments(100000, [&] { return rng.exponential(4.0); }).first, 0.25, 0.005);
}

TEST(Rng, UniformIntIsUnbiasedAndInBounds)
{
    Rng rng(2024, 5);
    EXPECT_THROW(rng.uniformInt(0), std::invalid_argument);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(rng.uniformInt(1), 0u);
    // Six faces, 600000 throws: each count within 5 sd of 100000 (sd 289).
    std::array<int, 6> counts{};
    for (int i = 0; i < 600000; ++i) {
        const std::uint64_t k = rng.uniformInt(6);
        ASSERT_LT(k, 6u);
        ++counts[k];
    }
    for (int c : counts) EXPECT_NEAR(c, 100000, 1500);
    // n just above 2^63: half the draws are rejected; still below n, and
    // both halves of the range come up about equally.
    const std::uint64_t big = (std::uint64_t(1) << 63) + 1;
    int upper = 0;
    for (int i = 0; i < 100000; ++i) {
        const std::uint64_t k = rng.uniformInt(big);
        ASSERT_LT(k, big);
        upper += k >= big / 2;
    }
    EXPECT_NEAR(upper, 50000, 800);
    const std::uint64_t all = std::numeric_limits<std::uint64_t>::max();
    for (int i = 0; i < 1000; ++i) EXPECT_LT(rng.uniformInt(all), all);
    // The high word of the product, checked against a known case.
    EXPECT_EQ(RcppSpool::random_detail::mulHi(all, all), all - 1);
    EXPECT_EQ(RcppSpool::random_detail::mulHi(std::uint64_t(1) << 63, 6), 3u);
}

// Our logarithm (fdlibm's method, no FMA) against the platform's: within one
// ulp (both are below one ulp from the true value), mostly identical.
TEST(Rng, PortableLogIsWithinOneUlpOfStdLog)
{
    Rng rng(1, 1);
    std::size_t same = 0;
    const int n = 1000000;
    for (int i = 0; i < n; ++i) {
        // (0, 1] as uniform() and the polar method give it, and a wider range.
        const double x = i % 2 ? rng.uniform() : std::ldexp(rng.uniform(), static_cast<int>(rng.uniformInt(200)) - 100);
        const double ours = RcppSpool::random_detail::log(x), theirs = std::log(x);
        ASSERT_LE(ulpDistance(ours, theirs), 1) << std::hexfloat << x;
        same += ours == theirs;
    }
    EXPECT_GT(same, n * 0.9);
    EXPECT_EQ(RcppSpool::random_detail::log(1.0), 0.0);
    EXPECT_EQ(RcppSpool::random_detail::log(0.5), -std::log(2.0));
    EXPECT_EQ(RcppSpool::random_detail::log(0x1.0p-1022), std::log(0x1.0p-1022));
}

// The must-show, in C++: a parallel simulation gives bitwise the same vector
// for 1, 2, 4 and 8 threads, and another for another seed.
TEST(Rng, ParallelSimulationIsTheSameForAnyThreadCount)
{
    const std::ptrdiff_t paths = 20000;
    const int steps = 50;
    const auto one = simulate(1, paths, steps, 1);
    for (std::size_t threads : {2u, 4u, 8u}) {
        const auto other = simulate(1, paths, steps, threads);
        ASSERT_EQ(other.size(), one.size());
        EXPECT_EQ(std::memcmp(one.data(), other.data(), one.size() * sizeof(double)), 0) << threads << " threads";
    }
    const auto seed2 = simulate(2, paths, steps, 4);
    std::size_t equal = 0;
    for (std::size_t i = 0; i < one.size(); ++i) equal += one[i] == seed2[i];
    EXPECT_EQ(equal, 0u) << "another seed, other numbers";
    // Sane: each path is N(0, 50) + Exp(1) + U{0..9}, mean 5.5.
    double mean = 0;
    for (double x : one) mean += x / paths;
    EXPECT_NEAR(mean, 5.5, 0.3);
}

TEST(RngSeed, MainThreadOnlyAndFreshWithoutR)
{
    // Standalone: std::random_device, another seed each call (equal: 2^-64).
    EXPECT_NE(RcppSpool::rngSeed(), RcppSpool::rngSeed());
    // Any other thread: std::logic_error, with a message that says what to do.
    std::string message;
    std::thread t([&] {
        try {
            RcppSpool::rngSeed();
        } catch (const std::logic_error& e) {
            message = e.what();
        }
    });
    t.join();
    EXPECT_NE(message.find("worker thread"), std::string::npos) << message;
    // From a pool worker, through a Future: rethrown as thrown.
    RcppSpool::ThreadPool pool(1);
    auto f = pool.pushReturn([] { return RcppSpool::rngSeed(); });
    EXPECT_THROW(f.get(), std::logic_error);
}
