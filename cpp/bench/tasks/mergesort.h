// mergesort: recursive balanced, variable granularity (INNCABS/Cilk "Sort").
// Sorts 32-bit keys: the two halves are sorted in parallel (ping-ponging
// between the array and a buffer), then merged by a parallel merge that
// splits at the median of the larger run and a binary search in the other.
// Leaves: std::sort below sortCutoff, std::merge below mergeCutoff. Memory
// bound at the top levels, compute bound at the leaves.
// Fine grain: both cutoffs 128 (a leaf sorts or merges 128 keys, about 1 us).
#pragma once

#include "harness.h"

namespace bench {
namespace mergesort {

using Key = std::uint32_t;

struct Cut {
    std::size_t sort, merge;
};

// ---- merging ----------------------------------------------------------------

BENCH_KERNEL inline void mergeLeaf(const Key* a, std::size_t na, const Key* b, std::size_t nb, Key* out)
{
    noteThread();
    std::merge(a, a + na, b, b + nb, out);
}

//! Where to split a merge of a[0:na] and b[0:nb] (na >= nb): a's median, and
//! the number of b's keys below it.
inline void splitMerge(const Key* a, std::size_t na, const Key* b, std::size_t nb, std::size_t& ma,
                       std::size_t& mb)
{
    ma = na / 2;
    mb = static_cast<std::size_t>(std::lower_bound(b, b + nb, a[ma]) - b);
}

// Every merge function below: merges sorted a[0:na] and b[0:nb] into out.

inline void mergeSeq(const Key* a, std::size_t na, const Key* b, std::size_t nb, Key* out, Cut c)
{
    if (na < nb) return mergeSeq(b, nb, a, na, out, c);
    if (na + nb <= c.merge || nb == 0) return mergeLeaf(a, na, b, nb, out);
    std::size_t ma, mb;
    splitMerge(a, na, b, nb, ma, mb);
    out[ma + mb] = a[ma];
    mergeSeq(a, ma, b, mb, out, c);
    mergeSeq(a + ma + 1, na - ma - 1, b + mb, nb - mb, out + ma + mb + 1, c);
}

template <class A>
void mergeFutures(const Key* a, std::size_t na, const Key* b, std::size_t nb, Key* out, Cut c)
{
    if (na < nb) return mergeFutures<A>(b, nb, a, na, out, c);
    if (na + nb <= c.merge || nb == 0) return mergeLeaf(a, na, b, nb, out);
    std::size_t ma, mb;
    splitMerge(a, na, b, nb, ma, mb);
    out[ma + mb] = a[ma];
    auto left = A::spawn([=] { mergeFutures<A>(a, ma, b, mb, out, c); });
    mergeFutures<A>(a + ma + 1, na - ma - 1, b + mb, nb - mb, out + ma + mb + 1, c);
    left.get();
}

template <class G>
void mergeGroup(const Key* a, std::size_t na, const Key* b, std::size_t nb, Key* out, Cut c)
{
    if (na < nb) return mergeGroup<G>(b, nb, a, na, out, c);
    if (na + nb <= c.merge || nb == 0) return mergeLeaf(a, na, b, nb, out);
    std::size_t ma, mb;
    splitMerge(a, na, b, nb, ma, mb);
    out[ma + mb] = a[ma];
    G g;
    g.run([=] { mergeGroup<G>(a, ma, b, mb, out, c); });
    mergeGroup<G>(a + ma + 1, na - ma - 1, b + mb, nb - mb, out + ma + mb + 1, c);
    g.wait();
}

inline void mergeOmp(const Key* a, std::size_t na, const Key* b, std::size_t nb, Key* out, Cut c)
{
    if (na < nb) return mergeOmp(b, nb, a, na, out, c);
    if (na + nb <= c.merge || nb == 0) return mergeLeaf(a, na, b, nb, out);
    std::size_t ma, mb;
    splitMerge(a, na, b, nb, ma, mb);
    out[ma + mb] = a[ma];
#pragma omp task firstprivate(a, ma, b, mb, out, c)
    mergeOmp(a, ma, b, mb, out, c);
    mergeOmp(a + ma + 1, na - ma - 1, b + mb, nb - mb, out + ma + mb + 1, c);
#pragma omp taskwait
}

// ---- sorting ----------------------------------------------------------------
// Every sort function below: sorts x[0:n] using y[0:n] as the buffer; the
// result ends in y if `intoY`, else in x.

BENCH_KERNEL inline void sortLeaf(Key* x, Key* y, std::size_t n, bool intoY)
{
    noteThread();
    std::sort(x, x + n);
    if (intoY) std::copy(x, x + n, y);
}

inline void sortSeq(Key* x, Key* y, std::size_t n, bool intoY, Cut c)
{
    if (n <= c.sort) return sortLeaf(x, y, n, intoY);
    const std::size_t h = n / 2;
    sortSeq(x, y, h, !intoY, c);
    sortSeq(x + h, y + h, n - h, !intoY, c);
    Key* from = intoY ? x : y;
    mergeSeq(from, h, from + h, n - h, intoY ? y : x, c);
}

template <class A>
void sortFutures(Key* x, Key* y, std::size_t n, bool intoY, Cut c)
{
    if (n <= c.sort) return sortLeaf(x, y, n, intoY);
    const std::size_t h = n / 2;
    auto left = A::spawn([=] { sortFutures<A>(x, y, h, !intoY, c); });
    sortFutures<A>(x + h, y + h, n - h, !intoY, c);
    left.get();
    Key* from = intoY ? x : y;
    mergeFutures<A>(from, h, from + h, n - h, intoY ? y : x, c);
}

template <class G>
void sortGroup(Key* x, Key* y, std::size_t n, bool intoY, Cut c)
{
    if (n <= c.sort) return sortLeaf(x, y, n, intoY);
    const std::size_t h = n / 2;
    G g;
    g.run([=] { sortGroup<G>(x, y, h, !intoY, c); });
    sortGroup<G>(x + h, y + h, n - h, !intoY, c);
    g.wait();
    Key* from = intoY ? x : y;
    mergeGroup<G>(from, h, from + h, n - h, intoY ? y : x, c);
}

inline void sortOmp(Key* x, Key* y, std::size_t n, bool intoY, Cut c)
{
    if (n <= c.sort) return sortLeaf(x, y, n, intoY);
    const std::size_t h = n / 2;
#pragma omp task firstprivate(x, y, h, intoY, c)
    sortOmp(x, y, h, !intoY, c);
    sortOmp(x + h, y + h, n - h, !intoY, c);
#pragma omp taskwait
    Key* from = intoY ? x : y;
    mergeOmp(from, h, from + h, n - h, intoY ? y : x, c);
}

//! An order-independent fingerprint of a multiset of keys.
inline std::uint64_t fingerprint(const std::vector<Key>& v)
{
    std::uint64_t s = 0;
    for (Key k : v) s += mix64(k);
    return s;
}

class Bench : public Benchmark {
public:
    const char* name() const override { return "mergesort"; }
    const char* shape() const override { return "recursive balanced"; }
    std::string params() const override
    {
        return "n=" + std::to_string(n_) + " sortCutoff=" + std::to_string(cut_.sort) +
               " mergeCutoff=" + std::to_string(cut_.merge);
    }
    bool hasFine() const override { return true; }
    void setUp(bool quick, Grain grain) override
    {
        if (grain == Grain::fine) {
            n_ = quick ? 40000 : 4000000;
            cut_ = {128, 128};
        } else {
            n_ = quick ? 1000000 : 16000000;
            cut_ = {quick ? std::size_t(4096) : std::size_t(16384), quick ? std::size_t(4096) : std::size_t(16384)};
        }
        input_.resize(n_);
        Rng r(42);
        for (auto& k : input_) k = static_cast<Key>(r.next());
        print_ = fingerprint(input_);
        data_.resize(n_);
        buf_.resize(n_);
    }
    void reset() override { std::copy(input_.begin(), input_.end(), data_.begin()); }
    void run(Method m) override
    {
        Key* x = data_.data();
        Key* y = buf_.data();
        switch (m) {
        case Method::seq: sortSeq(x, y, n_, false, cut_); break;
        case Method::spoolAsync: sortFutures<SpoolAsync>(x, y, n_, false, cut_); break;
        case Method::spoolOptional: sortFutures<SpoolOptional>(x, y, n_, false, cut_); break;
        case Method::stdAsync: sortFutures<StdAsync>(x, y, n_, false, cut_); break;
        case Method::spoolGroup: sortGroup<RcppSpool::TaskGroup>(x, y, n_, false, cut_); break;
        case Method::tbb: sortGroup<tbb::task_group>(x, y, n_, false, cut_); break;
        case Method::omp: sortOmp(x, y, n_, false, cut_); break;
        }
    }
    //! Sorted, and the same keys as the input.
    bool verify() override { return std::is_sorted(data_.begin(), data_.end()) && fingerprint(data_) == print_; }

private:
    std::size_t n_ = 0;
    Cut cut_{0, 0};
    std::vector<Key> input_, data_, buf_;
    std::uint64_t print_ = 0;
};

}  // namespace mergesort
}  // namespace bench
