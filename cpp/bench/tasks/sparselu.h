// sparselu: loop-like, coarse (INNCABS/BOTS "SparseLU").
// LU factorisation of a sparse block matrix (NB x NB blocks of BS x BS
// floats, about half the blocks empty; BOTS's pattern and values). For each
// diagonal block kk, sequentially: factor it (lu0); then, as a loop of tasks
// spawned by the one thread that walks kk, the forward solves (fwd) of row kk
// and the divisions (bdiv) of column kk; wait; then the updates (bmod) of the
// trailing blocks, creating the blocks that fill in; wait.
// The blocks live at fixed places in one preallocated slab, so that every
// method computes on the same addresses: with a malloc per fill-in block (as
// BOTS does), where a block landed depended on which thread's malloc arena
// served it, and that alone changed bmod's speed by 30% from one method (or
// one run) to the next.
#pragma once

#include "harness.h"

namespace bench {
namespace sparselu {


// BOTS's kernels.
BENCH_KERNEL inline void lu0(float* d, int bs)
{
    for (int k = 0; k < bs; ++k)
        for (int i = k + 1; i < bs; ++i) {
            d[i * bs + k] /= d[k * bs + k];
            for (int j = k + 1; j < bs; ++j) d[i * bs + j] -= d[i * bs + k] * d[k * bs + j];
        }
}
BENCH_KERNEL inline void fwd(const float* diag, float* col, int bs)
{
    noteThread();
    for (int k = 0; k < bs; ++k)
        for (int i = k + 1; i < bs; ++i)
            for (int j = 0; j < bs; ++j) col[i * bs + j] -= diag[i * bs + k] * col[k * bs + j];
}
BENCH_KERNEL inline void bdiv(const float* diag, float* row, int bs)
{
    noteThread();
    for (int i = 0; i < bs; ++i)
        for (int k = 0; k < bs; ++k) {
            row[i * bs + k] /= diag[k * bs + k];
            for (int j = k + 1; j < bs; ++j) row[i * bs + j] -= row[i * bs + k] * diag[k * bs + j];
        }
}
BENCH_KERNEL inline void bmod(const float* row, const float* col, float* inner, int bs)
{
    noteThread();
    for (int i = 0; i < bs; ++i)
        for (int k = 0; k < bs; ++k) {
            const float r = row[i * bs + k];
            for (int j = 0; j < bs; ++j) inner[i * bs + j] -= r * col[k * bs + j];
        }
}

struct Matrix {
    int nb = 0, bs = 0;
    std::size_t stride = 0;     // floats from one block to the next
    std::vector<float> slab;    // nb * nb blocks of bs * bs floats, row-major
    std::vector<char> present;  // nb * nb: the block exists (else it is zero)

    void shape(int nBlocks, int blockSize)
    {
        if (nb == nBlocks && bs == blockSize) return;
        nb = nBlocks;
        bs = blockSize;
        stride = (static_cast<std::size_t>(bs) * bs + 15) / 16 * 16 + 16;  // cache-line multiple, staggered
        slab.assign(stride * nb * nb, 0.0f);
        present.assign(static_cast<std::size_t>(nb) * nb, 0);
    }
    float* ptr(int i, int j) { return slab.data() + (static_cast<std::size_t>(i) * nb + j) * stride; }
    bool has(int i, int j) const { return present[static_cast<std::size_t>(i) * nb + j] != 0; }
    //! Creates a missing block as zeros (the fill-in), before its task starts.
    float* fill(int i, int j)
    {
        float* p = ptr(i, j);
        if (!has(i, j)) {
            std::fill(p, p + static_cast<std::size_t>(bs) * bs, 0.0f);
            present[static_cast<std::size_t>(i) * nb + j] = 1;
        }
        return p;
    }
    //! Same blocks, same values, bit for bit.
    bool sameAs(Matrix& o)
    {
        if (nb != o.nb || bs != o.bs || present != o.present) return false;
        for (int i = 0; i < nb; ++i)
            for (int j = 0; j < nb; ++j)
                if (has(i, j) && std::memcmp(ptr(i, j), o.ptr(i, j), sizeof(float) * bs * bs) != 0) return false;
        return true;
    }
};

//! BOTS's genmat: the sparsity pattern and the pseudo-random values.
inline void generate(Matrix& m, int nb, int bs)
{
    m.shape(nb, bs);
    int init = 1325;
    for (int ii = 0; ii < nb; ++ii)
        for (int jj = 0; jj < nb; ++jj) {
            bool null = false;
            if (ii < jj && ii % 3 != 0) null = true;
            if (ii > jj && jj % 3 != 0) null = true;
            if (ii % 2 == 1) null = true;
            if (jj % 2 == 1) null = true;
            if (ii == jj) null = false;
            if (ii == jj - 1) null = false;
            if (ii - 1 == jj) null = false;
            m.present[static_cast<std::size_t>(ii) * nb + jj] = !null;
            if (null) continue;
            float* b = m.ptr(ii, jj);
            for (int k = 0; k < bs * bs; ++k) {
                init = (3125 * init) % 65536;
                b[k] = static_cast<float>((init - 32768.0) / 16384.0);
            }
        }
}

// The factorisation. `spawn(f)` starts a task, `sync()` waits for all
// started since the last sync; the sequential version passes a plain call.
template <class Spawn, class Sync>
void factor(Matrix& m, Spawn&& spawn, Sync&& sync)
{
    const int nb = m.nb, bs = m.bs;
    for (int kk = 0; kk < nb; ++kk) {
        float* diag = m.ptr(kk, kk);
        lu0(diag, bs);
        for (int jj = kk + 1; jj < nb; ++jj)
            if (m.has(kk, jj)) {
                float* col = m.ptr(kk, jj);
                spawn([diag, col, bs] { fwd(diag, col, bs); });
            }
        for (int ii = kk + 1; ii < nb; ++ii)
            if (m.has(ii, kk)) {
                float* row = m.ptr(ii, kk);
                spawn([diag, row, bs] { bdiv(diag, row, bs); });
            }
        sync();
        for (int ii = kk + 1; ii < nb; ++ii)
            if (m.has(ii, kk))
                for (int jj = kk + 1; jj < nb; ++jj)
                    if (m.has(kk, jj)) {
                        const float* row = m.ptr(ii, kk);
                        const float* col = m.ptr(kk, jj);
                        float* inner = m.fill(ii, jj);
                        spawn([row, col, inner, bs] { bmod(row, col, inner, bs); });
                    }
        sync();
    }
}

inline void seq(Matrix& m)
{
    factor(m, [](auto&& f) { f(); }, [] {});
}

template <class A>
void futures(Matrix& m)
{
    std::vector<FutureOf<A, void>> f;
    factor(
        m, [&](auto&& task) { f.push_back(A::spawn(task)); },
        [&] {
            for (auto& x : f) x.get();
            f.clear();
        });
}

template <class G>
void group(Matrix& m)
{
    G g;
    factor(m, [&](auto&& task) { g.run(task); }, [&] { g.wait(); });
}

inline void omp(Matrix& m)
{
    factor(
        m,
        [](auto&& task) {
            auto t = task;
#pragma omp task firstprivate(t)
            t();
        },
        [] {
#pragma omp taskwait
        });
}

class Bench : public Benchmark {
public:
    const char* name() const override { return "sparselu"; }
    const char* shape() const override { return "loop-like"; }
    std::string params() const override
    {
        return "blocks=" + std::to_string(nb_) + "x" + std::to_string(nb_) + " of " + std::to_string(bs_) + "x" +
               std::to_string(bs_);
    }
    void setUp(bool quick, Grain) override
    {
        nb_ = quick ? 20 : 36;
        bs_ = quick ? 40 : 100;  // (powers of two give zero pivots with BOTS's values)
        generate(ref_, nb_, bs_);
        seq(ref_);     // the reference: the sequential factorisation
        refOk_ = true; // ... which must be finite (no zero pivots)
        for (int i = 0; i < nb_; ++i)
            for (int j = 0; j < nb_; ++j)
                if (ref_.has(i, j))
                    for (int k = 0; k < bs_ * bs_; ++k) refOk_ = refOk_ && std::isfinite(ref_.ptr(i, j)[k]);
    }
    void reset() override { generate(m_, nb_, bs_); }
    void run(Method m) override
    {
        switch (m) {
        case Method::seq: seq(m_); break;
        case Method::spoolAsync: futures<SpoolAsync>(m_); break;
        case Method::spoolOptional: futures<SpoolOptional>(m_); break;
        case Method::stdAsync: futures<StdAsync>(m_); break;
        case Method::spoolGroup: group<RcppSpool::TaskGroup>(m_); break;
        case Method::tbb: group<tbb::task_group>(m_); break;
        case Method::omp: omp(m_); break;
        }
    }
    //! The same blocks, bit for bit, as the sequential factorisation (each
    //! block sees the same operations in the same order in every version).
    bool verify() override { return refOk_ && m_.sameAs(ref_); }

private:
    int nb_ = 0, bs_ = 0;
    Matrix m_, ref_;
    bool refOk_ = false;
};

}  // namespace sparselu
}  // namespace bench
