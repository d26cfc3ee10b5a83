// nqueens: recursive unbalanced, moderate granularity (INNCABS/Cilk "NQueens").
// Counts the placements of n non-attacking queens, row by row (bit masks of
// the attacked columns and diagonals). In the first `depth` rows every legal
// square is a task; the subtrees below differ widely in size.
// Fine grain: taskDepth = n, a task per legal square in every row (per node).
#pragma once

#include "harness.h"

namespace bench {
namespace nqueens {

//! The state after placing queens in some rows: attacked columns and the
//! two diagonals, as bit masks of the next row.
struct Board {
    unsigned cols, d1, d2;
    Board place(unsigned bit) const { return {cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1}; }
};

//! The sequential solver: solutions below `b` with `left` rows to fill.
inline long count(unsigned all, Board b, int left)
{
    if (left == 0) return 1;
    long n = 0;
    for (unsigned free = all & ~(b.cols | b.d1 | b.d2); free; free &= free - 1)
        n += count(all, b.place(free & -free), left - 1);
    return n;
}

BENCH_KERNEL inline long leaf(unsigned all, Board b, int left)
{
    noteThread();
    return count(all, b, left);
}

//! The legal squares of the next row, as single bits.
inline std::vector<unsigned> moves(unsigned all, Board b)
{
    std::vector<unsigned> m;
    for (unsigned free = all & ~(b.cols | b.d1 | b.d2); free; free &= free - 1) m.push_back(free & -free);
    return m;
}

// In all versions: solutions below `b`, `row` rows placed, `left` to go;
// rows < depth spawn a task per legal square.

inline long seq(unsigned all, Board b, int row, int left, int depth)
{
    if (row >= depth || left == 0) return leaf(all, b, left);
    long n = 0;
    for (unsigned bit : moves(all, b)) n += seq(all, b.place(bit), row + 1, left - 1, depth);
    return n;
}

template <class A>
long futures(unsigned all, Board b, int row, int left, int depth)
{
    if (row >= depth || left == 0) return leaf(all, b, left);
    std::vector<FutureOf<A, long>> f;
    for (unsigned bit : moves(all, b)) {
        const Board c = b.place(bit);
        f.push_back(A::spawn([=] { return futures<A>(all, c, row + 1, left - 1, depth); }));
    }
    long n = 0;
    for (auto& x : f) n += x.get();
    return n;
}

template <class G>
long group(unsigned all, Board b, int row, int left, int depth)
{
    if (row >= depth || left == 0) return leaf(all, b, left);
    const std::vector<unsigned> m = moves(all, b);
    std::vector<long> counts(m.size(), 0);
    G g;
    for (std::size_t i = 0; i < m.size(); ++i) {
        const Board c = b.place(m[i]);
        long* out = &counts[i];
        g.run([=] { *out = group<G>(all, c, row + 1, left - 1, depth); });
    }
    g.wait();
    long n = 0;
    for (long c : counts) n += c;
    return n;
}

inline long omp(unsigned all, Board b, int row, int left, int depth)
{
    if (row >= depth || left == 0) return leaf(all, b, left);
    const std::vector<unsigned> m = moves(all, b);
    std::vector<long> counts(m.size(), 0);
    for (std::size_t i = 0; i < m.size(); ++i) {
        const Board c = b.place(m[i]);
        long* out = &counts[i];
#pragma omp task firstprivate(all, c, row, left, depth, out)
        *out = omp(all, c, row + 1, left - 1, depth);
    }
#pragma omp taskwait
    long n = 0;
    for (long c : counts) n += c;
    return n;
}

class Bench : public Benchmark {
public:
    const char* name() const override { return "nqueens"; }
    const char* shape() const override { return "recursive unbalanced"; }
    bool hasFine() const override { return true; }
    std::string params() const override
    {
        return "n=" + std::to_string(n_) + " taskDepth=" + std::to_string(depth_) +
               (depth_ >= n_ ? " (a task per node)" : "");
    }
    void setUp(bool quick, Grain grain) override
    {
        if (grain == Grain::fine) {
            n_ = quick ? 7 : 13;
            depth_ = n_;
        } else {
            n_ = quick ? 11 : 15;
            depth_ = quick ? 3 : 4;
        }
        // Known counts (OEIS A000170).
        static const long known[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596,
                                     2279184, 14772512, 95815104};
        expect_ = known[n_];
    }
    void reset() override { result_ = -1; }
    void run(Method m) override
    {
        const unsigned all = (1u << n_) - 1;
        const Board b{0, 0, 0};
        switch (m) {
        case Method::seq: result_ = seq(all, b, 0, n_, depth_); break;
        case Method::spoolAsync: result_ = futures<SpoolAsync>(all, b, 0, n_, depth_); break;
        case Method::spoolOptional: result_ = futures<SpoolOptional>(all, b, 0, n_, depth_); break;
        case Method::stdAsync: result_ = futures<StdAsync>(all, b, 0, n_, depth_); break;
        case Method::spoolGroup: result_ = group<RcppSpool::TaskGroup>(all, b, 0, n_, depth_); break;
        case Method::tbb: result_ = group<tbb::task_group>(all, b, 0, n_, depth_); break;
        case Method::omp: result_ = omp(all, b, 0, n_, depth_); break;
        }
    }
    bool verify() override { return result_ == expect_; }

private:
    int n_ = 0, depth_ = 0;
    long expect_ = 0, result_ = -1;
};

}  // namespace nqueens
}  // namespace bench
