// fft: recursive balanced, variable granularity (INNCABS/Cilk "FFT").
// A radix-2 decimation-in-time FFT of N complex doubles, out of place: the two
// half-size transforms (even and odd inputs) run in parallel, then the
// butterflies that combine them run as a parallel loop, split recursively
// into chunks of at most `cutoff`. Transforms of size <= cutoff are leaves.
// Little work per byte: the top levels are bound by memory bandwidth.
// Fine grain: leaves of 32 points and butterfly chunks of 32 (about 100 ns
// of work per task).
#pragma once

#include "harness.h"

namespace bench {
namespace fft {

//! A complex number with plain arithmetic (std::complex's operator* checks
//! for NaN and infinity and is several times slower at -O2).
struct Cx {
    double re, im;
};
inline Cx operator+(Cx a, Cx b) { return {a.re + b.re, a.im + b.im}; }
inline Cx operator-(Cx a, Cx b) { return {a.re - b.re, a.im - b.im}; }
inline Cx operator*(Cx a, Cx b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
inline bool operator==(Cx a, Cx b) { return a.re == b.re && a.im == b.im; }

//! One transform's arguments: out[0:n] = DFT of in[0], in[s], ..., in[(n-1)s];
//! the twiddle factor for index k at this size is w[k * wstep].
struct Job {
    const Cx* in;
    std::size_t s;
    Cx* out;
    std::size_t n;
    const Cx* w;
    std::size_t wstep;
    Job even() const { return {in, 2 * s, out, n / 2, w, 2 * wstep}; }
    Job odd() const { return {in + s, 2 * s, out + n / 2, n / 2, w, 2 * wstep}; }
};

//! Butterflies k in [k0, k1) combining the two halves of j.out.
inline void butterflies(const Job& j, std::size_t k0, std::size_t k1)
{
    const std::size_t h = j.n / 2;
    for (std::size_t k = k0; k < k1; ++k) {
        const Cx t = j.w[k * j.wstep] * j.out[k + h];
        const Cx u = j.out[k];
        j.out[k] = u + t;
        j.out[k + h] = u - t;
    }
}

//! The sequential transform (recursive, down to size 2).
inline void transform(const Job& j)
{
    if (j.n == 2) {
        j.out[0] = j.in[0] + j.in[j.s];
        j.out[1] = j.in[0] - j.in[j.s];
        return;
    }
    transform(j.even());
    transform(j.odd());
    butterflies(j, 0, j.n / 2);
}

BENCH_KERNEL inline void leaf(const Job& j)
{
    noteThread();
    transform(j);
}
BENCH_KERNEL inline void butterflyLeaf(const Job& j, std::size_t k0, std::size_t k1)
{
    noteThread();
    butterflies(j, k0, k1);
}

// Sequential with the cutoffs: the parallel structure, minus tasks.
inline void bflySeq(const Job& j, std::size_t k0, std::size_t k1, std::size_t cutoff)
{
    if (k1 - k0 <= cutoff) return butterflyLeaf(j, k0, k1);
    const std::size_t m = k0 + (k1 - k0) / 2;
    bflySeq(j, k0, m, cutoff);
    bflySeq(j, m, k1, cutoff);
}
inline void seq(const Job& j, std::size_t cutoff)
{
    if (j.n <= cutoff) return leaf(j);
    seq(j.even(), cutoff);
    seq(j.odd(), cutoff);
    bflySeq(j, 0, j.n / 2, cutoff);
}

template <class A>
void bflyFutures(const Job& j, std::size_t k0, std::size_t k1, std::size_t cutoff)
{
    if (k1 - k0 <= cutoff) return butterflyLeaf(j, k0, k1);
    const std::size_t m = k0 + (k1 - k0) / 2;
    auto left = A::spawn([j, k0, m, cutoff] { bflyFutures<A>(j, k0, m, cutoff); });
    bflyFutures<A>(j, m, k1, cutoff);
    left.get();
}
template <class A>
void futures(const Job& j, std::size_t cutoff)
{
    if (j.n <= cutoff) return leaf(j);
    auto even = A::spawn([j, cutoff] { futures<A>(j.even(), cutoff); });
    futures<A>(j.odd(), cutoff);
    even.get();
    bflyFutures<A>(j, 0, j.n / 2, cutoff);
}

template <class G>
void bflyGroup(const Job& j, std::size_t k0, std::size_t k1, std::size_t cutoff)
{
    if (k1 - k0 <= cutoff) return butterflyLeaf(j, k0, k1);
    const std::size_t m = k0 + (k1 - k0) / 2;
    G g;
    g.run([&] { bflyGroup<G>(j, k0, m, cutoff); });
    bflyGroup<G>(j, m, k1, cutoff);
    g.wait();
}
template <class G>
void group(const Job& j, std::size_t cutoff)
{
    if (j.n <= cutoff) return leaf(j);
    G g;
    g.run([&] { group<G>(j.even(), cutoff); });
    group<G>(j.odd(), cutoff);
    g.wait();
    bflyGroup<G>(j, 0, j.n / 2, cutoff);
}

inline void bflyOmp(const Job& j, std::size_t k0, std::size_t k1, std::size_t cutoff)
{
    if (k1 - k0 <= cutoff) return butterflyLeaf(j, k0, k1);
    const std::size_t m = k0 + (k1 - k0) / 2;
#pragma omp task firstprivate(j, k0, m, cutoff)
    bflyOmp(j, k0, m, cutoff);
    bflyOmp(j, m, k1, cutoff);
#pragma omp taskwait
}
inline void omp(const Job& j, std::size_t cutoff)
{
    if (j.n <= cutoff) return leaf(j);
#pragma omp task firstprivate(j, cutoff)
    omp(j.even(), cutoff);
    omp(j.odd(), cutoff);
#pragma omp taskwait
    bflyOmp(j, 0, j.n / 2, cutoff);
}

class Bench : public Benchmark {
public:
    const char* name() const override { return "fft"; }
    const char* shape() const override { return "recursive balanced"; }
    bool hasFine() const override { return true; }
    std::string params() const override
    {
        return "N=2^" + std::to_string(logN_) + " cutoff=" + std::to_string(cutoff_);
    }
    void setUp(bool quick, Grain grain) override
    {
        if (grain == Grain::fine) {
            logN_ = quick ? 13 : 22;
            cutoff_ = 32;
        } else {
            logN_ = quick ? 18 : 24;
            cutoff_ = quick ? 2048 : 8192;
        }
        N_ = std::size_t(1) << logN_;
        in_.resize(N_);
        out_.assign(N_, Cx{0, 0});
        w_.resize(N_ / 2);
        const double pi = std::acos(-1.0);
        for (std::size_t k = 0; k < N_ / 2; ++k)
            w_[k] = {std::cos(2 * pi * k / N_), -std::sin(2 * pi * k / N_)};
        Rng r(3);
        for (auto& x : in_) x = {r.unit() - 0.5, r.unit() - 0.5};
        // The reference: the sequential version (the others do the same
        // arithmetic and must match it bit for bit), checked on a few bins
        // against the definition of the DFT.
        seq(job(), cutoff_);
        ref_ = out_;
        refOk_ = true;
        Rng s(5);
        for (int t = 0; t < 8; ++t) {
            const std::size_t k = s.below(N_);
            Cx d{0, 0};
            for (std::size_t j = 0; j < N_; ++j) {
                const std::size_t e = (j * k) % N_;
                const Cx wjk = e < N_ / 2 ? w_[e] : Cx{-w_[e - N_ / 2].re, -w_[e - N_ / 2].im};
                d = d + in_[j] * wjk;
            }
            if (std::hypot(d.re - ref_[k].re, d.im - ref_[k].im) > 1e-6) refOk_ = false;
        }
    }
    void reset() override { std::fill(out_.begin(), out_.end(), Cx{0, 0}); }
    void run(Method m) override
    {
        const Job j = job();
        switch (m) {
        case Method::seq: seq(j, cutoff_); break;
        case Method::spoolAsync: futures<SpoolAsync>(j, cutoff_); break;
        case Method::spoolOptional: futures<SpoolOptional>(j, cutoff_); break;
        case Method::stdAsync: futures<StdAsync>(j, cutoff_); break;
        case Method::spoolGroup: group<RcppSpool::TaskGroup>(j, cutoff_); break;
        case Method::tbb: group<tbb::task_group>(j, cutoff_); break;
        case Method::omp: omp(j, cutoff_); break;
        }
    }
    bool verify() override { return refOk_ && out_ == ref_; }

private:
    Job job() { return {in_.data(), 1, out_.data(), N_, w_.data(), 1}; }
    int logN_ = 0;
    std::size_t N_ = 0, cutoff_ = 0;
    std::vector<Cx> in_, out_, ref_, w_;
    bool refOk_ = false;
};

}  // namespace fft
}  // namespace bench
