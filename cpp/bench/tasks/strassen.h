// strassen: recursive balanced, moderate granularity (INNCABS/Cilk "Strassen").
// C = A * B for n x n doubles (n halves evenly down to the cutoff) by Strassen's algorithm: each
// level forms the seven products M1..M7 of half-size operand sums as seven
// tasks (each allocating its own temporaries), then combines them into C.
// Below the cutoff a plain i-k-j product. Seven-way spawns of big tasks.
// The temporaries (hundreds of MB per product, in blocks of up to a few MB)
// come from malloc, so the allocator shows: glibc gives each thread its own
// arena and unmaps a worker arena's heap as soon as it is free, so that the
// next block faults its pages in again. A runtime whose computing threads are
// all workers pays more page faults than one that computes on the main thread
// too (its heap keeps memory, see setUpAllocator). Run with
// GLIBC_TUNABLES=glibc.malloc.arena_max=1 to take that out of the comparison.
#pragma once

#include "harness.h"

namespace bench {
namespace strassen {

//! A square block inside a row-major matrix with leading dimension ld.
struct View {
    double* p;
    std::size_t ld;
    double& at(std::size_t i, std::size_t j) const { return p[i * ld + j]; }
    View quad(std::size_t h, int r, int c) const { return {p + r * h * ld + c * h, ld}; }
};

//! A freshly allocated h x h matrix, zeroed.
struct Temp {
    std::vector<double> v;
    explicit Temp(std::size_t h) : v(h * h) {}
    View view(std::size_t h) { return {v.data(), h}; }
};

BENCH_KERNEL inline void add(View a, View b, View c, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) c.at(i, j) = a.at(i, j) + b.at(i, j);
}
BENCH_KERNEL inline void sub(View a, View b, View c, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) c.at(i, j) = a.at(i, j) - b.at(i, j);
}

//! c = a * b, the sequential leaf.
BENCH_KERNEL inline void mulLeaf(View a, View b, View c, std::size_t n)
{
    noteThread();
    for (std::size_t i = 0; i < n; ++i) {
        double* ci = &c.at(i, 0);
        for (std::size_t j = 0; j < n; ++j) ci[j] = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const double aik = a.at(i, k);
            const double* bk = &b.at(k, 0);
            for (std::size_t j = 0; j < n; ++j) ci[j] += aik * bk[j];
        }
    }
}

//! The seven products of one Strassen level: product(k, mul) forms the
//! operands of M_k in fresh temporaries and calls mul(x, y, M_k). Shared by
//! all versions, so they do exactly the same arithmetic.
struct Level {
    View A, B;
    std::size_t h;
    Temp M[7];
    Level(View a, View b, std::size_t half)
        : A(a), B(b), h(half), M{Temp(half), Temp(half), Temp(half), Temp(half), Temp(half), Temp(half), Temp(half)}
    {}

    template <class Mul>
    void product(int k, Mul&& mul)
    {
        const View a11 = A.quad(h, 0, 0), a12 = A.quad(h, 0, 1), a21 = A.quad(h, 1, 0), a22 = A.quad(h, 1, 1);
        const View b11 = B.quad(h, 0, 0), b12 = B.quad(h, 0, 1), b21 = B.quad(h, 1, 0), b22 = B.quad(h, 1, 1);
        Temp s(h), t(h);
        View S = s.view(h), T = t.view(h), out = M[k].view(h);
        switch (k) {
        case 0: add(a11, a22, S, h); add(b11, b22, T, h); mul(S, T, out); break;  // M1 = (A11+A22)(B11+B22)
        case 1: add(a21, a22, S, h); mul(S, b11, out); break;                      // M2 = (A21+A22)B11
        case 2: sub(b12, b22, T, h); mul(a11, T, out); break;                      // M3 = A11(B12-B22)
        case 3: sub(b21, b11, T, h); mul(a22, T, out); break;                      // M4 = A22(B21-B11)
        case 4: add(a11, a12, S, h); mul(S, b22, out); break;                      // M5 = (A11+A12)B22
        case 5: sub(a21, a11, S, h); add(b11, b12, T, h); mul(S, T, out); break;   // M6 = (A21-A11)(B11+B12)
        case 6: sub(a12, a22, S, h); add(b21, b22, T, h); mul(S, T, out); break;   // M7 = (A12-A22)(B21+B22)
        }
    }

    //! C from M1..M7.
    BENCH_KERNEL void combine(View C)
    {
        View m[7];
        for (int k = 0; k < 7; ++k) m[k] = M[k].view(h);
        const View c11 = C.quad(h, 0, 0), c12 = C.quad(h, 0, 1), c21 = C.quad(h, 1, 0), c22 = C.quad(h, 1, 1);
        for (std::size_t i = 0; i < h; ++i)
            for (std::size_t j = 0; j < h; ++j) {
                const double m1 = m[0].at(i, j), m2 = m[1].at(i, j), m3 = m[2].at(i, j), m4 = m[3].at(i, j),
                             m5 = m[4].at(i, j), m6 = m[5].at(i, j), m7 = m[6].at(i, j);
                c11.at(i, j) = m1 + m4 - m5 + m7;
                c12.at(i, j) = m3 + m5;
                c21.at(i, j) = m2 + m4;
                c22.at(i, j) = m1 - m2 + m3 + m6;
            }
    }
};

inline void seq(View A, View B, View C, std::size_t n, std::size_t cutoff)
{
    if (n <= cutoff) return mulLeaf(A, B, C, n);
    Level L(A, B, n / 2);
    for (int k = 0; k < 7; ++k)
        L.product(k, [&](View x, View y, View z) { seq(x, y, z, n / 2, cutoff); });
    L.combine(C);
}

template <class A>
void futures(View a, View b, View C, std::size_t n, std::size_t cutoff)
{
    if (n <= cutoff) return mulLeaf(a, b, C, n);
    Level L(a, b, n / 2);
    auto mul = [n, cutoff](View x, View y, View z) { futures<A>(x, y, z, n / 2, cutoff); };
    std::vector<FutureOf<A, void>> f;
    for (int k = 0; k < 6; ++k) f.push_back(A::spawn([&L, k, mul] { L.product(k, mul); }));
    L.product(6, mul);
    for (auto& x : f) x.get();
    L.combine(C);
}

template <class G>
void group(View a, View b, View C, std::size_t n, std::size_t cutoff)
{
    if (n <= cutoff) return mulLeaf(a, b, C, n);
    Level L(a, b, n / 2);
    auto mul = [n, cutoff](View x, View y, View z) { group<G>(x, y, z, n / 2, cutoff); };
    G g;
    for (int k = 0; k < 6; ++k) g.run([&L, k, mul] { L.product(k, mul); });
    L.product(6, mul);
    g.wait();
    L.combine(C);
}

inline void omp(View a, View b, View C, std::size_t n, std::size_t cutoff)
{
    if (n <= cutoff) return mulLeaf(a, b, C, n);
    Level L(a, b, n / 2);
    auto mul = [n, cutoff](View x, View y, View z) { omp(x, y, z, n / 2, cutoff); };
    for (int k = 0; k < 6; ++k) {
#pragma omp task shared(L) firstprivate(k, mul)
        L.product(k, mul);
    }
    L.product(6, mul);
#pragma omp taskwait
    L.combine(C);
}

class Bench : public Benchmark {
public:
    const char* name() const override { return "strassen"; }
    const char* shape() const override { return "recursive balanced"; }
    std::string params() const override
    {
        return "n=" + std::to_string(n_) + " cutoff=" + std::to_string(cutoff_);
    }
    void setUp(bool quick, Grain) override
    {
        n_ = quick ? 384 : 1792;
        cutoff_ = quick ? 48 : 112;
        a_.assign(n_ * n_, 0);
        b_.assign(n_ * n_, 0);
        Rng r(7);
        for (auto& x : a_) x = r.unit() - 0.5;
        for (auto& x : b_) x = r.unit() - 0.5;
        c_.assign(n_ * n_, 0);
        // The reference: the sequential Strassen (parallel versions do the
        // same arithmetic, so they must match it bit for bit).
        seq({a_.data(), n_}, {b_.data(), n_}, {c_.data(), n_}, n_, cutoff_);
        ref_ = c_;
        // ... and the reference itself agrees with the definition on a sample.
        refOk_ = true;
        Rng s(11);
        for (int t = 0; t < 64; ++t) {
            std::size_t i = s.below(n_), j = s.below(n_);
            double d = 0;
            for (std::size_t k = 0; k < n_; ++k) d += a_[i * n_ + k] * b_[k * n_ + j];
            if (std::fabs(d - ref_[i * n_ + j]) > 1e-8 * n_) refOk_ = false;
        }
    }
    void reset() override { std::fill(c_.begin(), c_.end(), 0.0); }
    void run(Method m) override
    {
        View A{a_.data(), n_}, B{b_.data(), n_}, C{c_.data(), n_};
        switch (m) {
        case Method::seq: seq(A, B, C, n_, cutoff_); break;
        case Method::spoolAsync: futures<SpoolAsync>(A, B, C, n_, cutoff_); break;
        case Method::spoolOptional: futures<SpoolOptional>(A, B, C, n_, cutoff_); break;
        case Method::stdAsync: futures<StdAsync>(A, B, C, n_, cutoff_); break;
        case Method::spoolGroup: group<RcppSpool::TaskGroup>(A, B, C, n_, cutoff_); break;
        case Method::tbb: group<tbb::task_group>(A, B, C, n_, cutoff_); break;
        case Method::omp: omp(A, B, C, n_, cutoff_); break;
        }
    }
    bool verify() override { return refOk_ && c_ == ref_; }

private:
    std::size_t n_ = 0, cutoff_ = 0;
    std::vector<double> a_, b_, c_, ref_;
    bool refOk_ = false;
};

}  // namespace strassen
}  // namespace bench
