// RcppParallel's API on RcppSpool: Worker, parallelFor, parallelReduce,
// Split, RVector, RMatrix, in namespace RcppSpool::RcppParallel.
//
// Code written for RcppParallel compiles against RcppSpool after a mechanical
// swap:
//
//     #include <RcppParallel.h>            ->  #include <RcppSpool/RcppParallel.h>
//     // [[Rcpp::depends(RcppParallel)]]  ->  // [[Rcpp::depends(RcppSpool)]]
//     RcppParallel::                      ->  RcppSpool::RcppParallel::
//     using namespace RcppParallel;       ->  using namespace RcppSpool::RcppParallel;
//
// and, in a package, `LinkingTo: RcppParallel` -> `LinkingTo: RcppSpool`,
// `CXX_STD = CXX17` in src/Makevars, and no `RcppParallel::RcppParallelLibs()`
// in PKG_LIBS (RcppSpool's headers need no library). This header includes
// <RcppSpool.h> (include it after Rcpp.h, as RcppParallel.h), so the whole
// native API is there too: RcppSpool::checkUserInterrupt() and
// RcppSpool::Rcout work inside a Worker.
//
// The names live in RcppSpool::RcppParallel, never in the global namespace
// RcppParallel: the real RcppParallel may be loaded in the same R session,
// and its Worker's vtable and typeinfo must stay apart from ours. Nothing of
// TBB is provided (tbb::parallel_sort, tbb::concurrent_vector, ...); the
// macro RCPP_PARALLEL_USE_TBB is 0 here, so code that tests it takes its
// non-TBB branch. See vignette("migrating-from-rcppparallel").
#pragma once

#include "../RcppSpool.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <numeric>
#include <vector>

//! 0: no TBB here. Code written for RcppParallel that checks
//! `#if RCPP_PARALLEL_USE_TBB` before using tbb:: takes its portable branch.
#ifndef RCPP_PARALLEL_USE_TBB
#define RCPP_PARALLEL_USE_TBB 0
#endif

//! The most leaves (pieces reduced by a reducer of their own) that
//! RcppSpool::RcppParallel::parallelReduce() cuts a range into; see there.
#ifndef RCPPSPOOL_RCPPPARALLEL_MAX_LEAVES
#define RCPPSPOOL_RCPPPARALLEL_MAX_LEAVES 128
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! RcppParallel's public API, on RcppSpool's scheduler.
namespace RcppParallel {

//! The work of a parallelFor(): derive from it and define
//! `operator()(begin, end)`, which processes the indices [begin, end).
//! It is called concurrently, on disjoint ranges, from several threads.
//! As in RcppParallel, a Worker can be neither copied nor assigned.
//!
//!     struct SquareRoot : RcppSpool::RcppParallel::Worker {
//!         const RcppSpool::RcppParallel::RMatrix<double> input;
//!         RcppSpool::RcppParallel::RMatrix<double> output;
//!         SquareRoot(const Rcpp::NumericMatrix in, Rcpp::NumericMatrix out) : input(in), output(out) {}
//!         void operator()(std::size_t begin, std::size_t end) {
//!             std::transform(input.begin() + begin, input.begin() + end,
//!                            output.begin() + begin, ::sqrt);
//!         }
//!     };
struct Worker {
    Worker() = default;
    virtual ~Worker() = default;
    //! Processes the indices [begin, end).
    virtual void operator()(std::size_t begin, std::size_t end) = 0;

    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;
};

//! The tag of a reducer's splitting constructor, `Reducer(const Reducer&, Split)`.
struct Split {};

//! A view of an R vector's memory that worker threads may use (as
//! RcppParallel's RVector): a pointer and a length, nothing else. Make it on
//! R's main thread from an Rcpp vector (NumericVector, IntegerVector, ...);
//! the vector must stay alive, and must not be reallocated, while the view
//! is used. It owns nothing.
template <typename T>
class RVector {
public:
    //! The vector's iterators: pointers.
    using iterator = T*;
    //! Its const iterators.
    using const_iterator = const T*;

    //! A view of `source`, any vector with begin() and length() (Rcpp's vectors).
    template <typename Source>
    explicit RVector(const Source& source)
        : begin_(const_cast<Source&>(source).begin()), end_(begin_ + source.length())
    {}
    //! A view of the elements [begin, end).
    RVector(T* begin, T* end) : begin_(begin), end_(end) {}
    RVector(const RVector& other) = default;
    RVector& operator=(const RVector& other) = default;

    //! The first element.
    iterator begin() { return begin_; }
    //! Past the last element.
    iterator end() { return end_; }
    //! The first element.
    const_iterator begin() const { return begin_; }
    //! Past the last element.
    const_iterator end() const { return end_; }
    //! The number of elements.
    std::size_t size() const { return static_cast<std::size_t>(end_ - begin_); }
    //! The number of elements.
    std::size_t length() const { return size(); }
    //! The element `i` (not checked).
    T& operator[](std::size_t i) { return begin_[i]; }
    //! The element `i` (not checked).
    const T& operator[](std::size_t i) const { return begin_[i]; }

private:
    T* begin_;
    T* end_;
};

//! A view of an R matrix's memory that worker threads may use, with
//! RcppParallel's surface: row(i) (a strided Row with random-access
//! iterators), column(j) (a contiguous Column), nrow(), ncol(), length(),
//! operator()(i, j), operator[](k), begin()/end() in column-major order.
//! The same class as RcppSpool::RMatrix (see rmatrix.h).
template <typename T>
using RMatrix = ::RcppSpool::RMatrix<T>;

namespace detail {

//! RcppParallel's rule for a setting: `requested` when it is positive and
//! not the default; else the environment variable `name` when it holds a
//! whole number; else `fallback`.
inline long resolveValue(const char* name, long requested, long fallback)
{
    if (requested != fallback && requested > 0) return requested;
    const char* var = std::getenv(name);
    if (var == nullptr) return fallback;
    errno = 0;
    char* end = nullptr;
    const long value = std::strtol(var, &end, 10);
    if (end == var || *end != '\0' || errno == ERANGE) return fallback;
    return value;
}

//! The thread count for a call given `numThreads` (-1: automatic, which
//! the runtime turns into defaultThreads() when the loop starts).
inline std::size_t resolveThreads(int numThreads)
{
    const long n = resolveValue("RCPP_PARALLEL_NUM_THREADS", numThreads, -1);
    return n > 0 ? static_cast<std::size_t>(n) : ::RcppSpool::table::kAutoThreads;
}

//! The grain size for a call given `grainSize` (at least 1).
inline std::size_t resolveGrain(std::size_t grainSize)
{
    const long g = resolveValue("RCPP_PARALLEL_GRAIN_SIZE", static_cast<long>(grainSize), 1);
    return g > 0 ? static_cast<std::size_t>(g) : 1;
}

//! How many leaves parallelReduce() cuts `n` indices into.
inline std::size_t reduceLeaves(std::size_t n, std::size_t grainSize)
{
    const std::size_t wanted = n / grainSize + (n % grainSize != 0);
    return std::min<std::size_t>(wanted, RCPPSPOOL_RCPPPARALLEL_MAX_LEAVES);
}

//! Where leaf `k` of `leaves` starts in [0, n): leaves differ in length by at most one.
inline std::size_t leafBegin(std::size_t n, std::size_t leaves, std::size_t k)
{
    return (n / leaves) * k + std::min(k, n % leaves);
}

}  // namespace detail

//! The number of threads parallelFor() and parallelReduce() use when given
//! numThreads = -1 (their default): the environment variable
//! RCPP_PARALLEL_NUM_THREADS (set by the R function setThreadOptions()) when
//! it holds a positive number, else RcppSpool::defaultThreads() (which
//! respects setThreads(), cgroups, mc.cores and CRAN's limits; 1 in a forked
//! child). The calls never use more threads than the global pool has
//! (ThreadPool::globalInstance().getNumThreads(), plus the caller).
inline int defaultNumThreads()
{
    const std::size_t n = detail::resolveThreads(-1);
    return static_cast<int>(n == ::RcppSpool::table::kAutoThreads ? ::RcppSpool::defaultThreads() : n);
}

//! Runs `worker(b, e)` over pieces [b, e) that cover [begin, end), on up to
//! `numThreads` threads (the caller and workers of RcppSpool's global pool),
//! and returns when all are done.
//!
//! As RcppParallel: `grainSize` is the smallest piece worth running apart
//! (pieces are about grainSize long or longer, the last one may be
//! shorter); the environment variable RCPP_PARALLEL_GRAIN_SIZE replaces a
//! grainSize of 1. `numThreads` -1 means defaultNumThreads(); other values
//! below 1 mean the same. As RcppSpool: the range is split adaptively among
//! the threads (work stealing); the first exception `worker` throws is
//! rethrown here (the pieces not started are skipped); an interrupt (Ctrl-C
//! in R) stops the loop at the next piece and throws
//! RcppSpool::UserInterruptException, and `worker` may itself call
//! RcppSpool::checkUserInterrupt() and print through RcppSpool::Rcout.
//! Nested calls (from inside a worker) work.
inline void parallelFor(std::size_t begin, std::size_t end, Worker& worker, std::size_t grainSize = 1,
                        int numThreads = -1)
{
    const std::size_t grain = detail::resolveGrain(grainSize);
    const std::size_t nThreads = detail::resolveThreads(numThreads);
    const std::size_t n = end > begin ? end - begin : 0;
    const std::size_t nBatches = n / grain + (n % grain != 0);
    ::RcppSpool::parallelFor(
        0, static_cast<std::ptrdiff_t>(n),
        [&worker, begin](std::ptrdiff_t b, std::ptrdiff_t e) {
            worker(begin + static_cast<std::size_t>(b), begin + static_cast<std::size_t>(e));
        },
        nThreads, nBatches);
}

namespace detail {

//! The join tree of one parallelReduce() call over `leaves` leaves, and the
//! reducers that are alive in it.
//!
//! The tree is fixed by the number of leaves alone: at stride s = 1, 2, 4,
//! ..., the node whose left child starts at leaf k (a multiple of 2s) joins
//! its right child, starting at leaf k + s, when there is one. A node is
//! named by k + s, an odd multiple of s, so the L - 1 nodes are 1 .. L - 1.
//!
//! Every split reducer is made from `pristine_`, a split of the caller's
//! reducer made before any leaf runs and never run itself: a split never
//! sees an accumulator that a leaf has touched, and never reads a reducer
//! that another thread is writing (TBB splits from a body that may have run
//! already; reducers whose splitting constructor copies the accumulator
//! then count it twice). A leaf's reducer is made when the leaf starts, and
//! a subtree's result is joined into its left sibling's as soon as both are
//! done, by whichever thread finishes the second of the two; the right one
//! is then freed. So the reducers alive at once are the pristine one, those
//! of leaves running now, and one per node with one half done: at most
//! about 2 x threads x depth, not one per leaf.
template <typename Reducer>
class ReduceTree {
public:
    ReduceTree(Reducer& root, std::size_t leaves)
        : root_(root), leaves_(leaves), slots_(leaves), pristine_(leaves > 1 ? new Reducer(root, Split()) : nullptr)
    {}

    //! Reduces leaf `k`, the indices [begin, end), then joins up the tree
    //! as far as the finished subtrees reach.
    void runLeaf(std::size_t k, std::size_t begin, std::size_t end)
    {
        if (k != 0) slots_[k].part.reset(new Reducer(*pristine_, Split()));
        at(k)(begin, end);
        // `k` is now the first leaf of the finished subtree we climb from.
        for (std::size_t s = 1; s < leaves_; s *= 2) {
            const std::size_t left = k & ~(2 * s - 1), right = left + s;
            if (right >= leaves_) continue;  // no right sibling: passes up as it is
            // The first of the two halves to finish leaves the join to the
            // second; acq_rel makes each half's writes visible to the joiner.
            if (slots_[right].arrived.fetch_add(1, std::memory_order_acq_rel) == 0) return;
            at(left).join(at(right));
            slots_[right].part.reset();
            k = left;
        }
    }

private:
    //! The reducer of the subtree that starts at leaf `k`.
    Reducer& at(std::size_t k) { return k == 0 ? root_ : *slots_[k].part; }

    struct Slot {
        std::unique_ptr<Reducer> part;  //!< the reducer of the subtree starting here (k > 0)
        std::atomic<unsigned char> arrived{0};  //!< halves done of the node named here
    };
    Reducer& root_;
    const std::size_t leaves_;
    std::vector<Slot> slots_;
    const std::unique_ptr<Reducer> pristine_;
};

}  // namespace detail

//! Reduces [begin, end) with `reducer` on up to `numThreads` threads, as
//! RcppParallel's parallelReduce: `Reducer` derives from Worker (or just has
//! the members below) and has
//!   - `operator()(std::size_t begin, std::size_t end)`, accumulating [begin, end);
//!   - a splitting constructor `Reducer(const Reducer& other, Split)`, making
//!     an empty accumulator that shares `other`'s inputs;
//!   - `join(const Reducer& rhs)`, adding rhs's result (of indices right
//!     after this one's) to this one.
//! When it returns, `reducer` holds the result of the whole range.
//!
//! Unlike TBB's, the result is the same from run to run and for any thread
//! count: it depends only on the range's length n and the grain size. The
//! range is cut into L = min(ceil(n / grainSize), RCPPSPOOL_RCPPPARALLEL_MAX_LEAVES
//! (128)) leaves of consecutive indices whose lengths differ by at most one
//! (leaf k starts at begin + floor(n / L) k + min(k, n mod L)). Leaf 0 is
//! reduced by `reducer` itself, every other one by a reducer of its own,
//! with one call of operator() over the whole leaf. The leaves are joined
//! pairwise, at strides 1, 2, 4, ...: leaf k's subtree joins leaf k + s's
//! when k is a multiple of 2s, until everything has been joined into
//! `reducer`. Leaves and joins run in parallel; a join runs as soon as both
//! of its halves are done, and its right half is then destroyed.
//!
//! Also unlike TBB's, a split never copies work done: before any leaf runs,
//! `reducer` is split once into a pristine reducer that never runs, and the
//! reducer of every other leaf is split from that one (L splits in all when
//! L > 1, none otherwise). So a splitting constructor that copies the
//! accumulator (`value(other.value)`) starts every leaf from `reducer`'s
//! initial value, and no split reads a reducer while another thread writes
//! it. Splits may run at the same time on several threads, all reading the
//! pristine reducer through the const reference. At most about
//! 2 x threads x log2(L) split reducers are alive at once, not L.
//! An empty range calls nothing. grainSize, numThreads, exceptions and
//! interrupts: as parallelFor(); after an exception every split reducer has
//! been destroyed.
template <typename Reducer>
void parallelReduce(std::size_t begin, std::size_t end, Reducer& reducer, std::size_t grainSize = 1,
                    int numThreads = -1)
{
    const std::size_t grain = detail::resolveGrain(grainSize);
    const std::size_t nThreads = detail::resolveThreads(numThreads);
    const std::size_t n = end > begin ? end - begin : 0;
    if (n == 0) return;
    const std::size_t leaves = detail::reduceLeaves(n, grain);
    detail::ReduceTree<Reducer> tree(reducer, leaves);
    ::RcppSpool::parallelFor(
        0, static_cast<std::ptrdiff_t>(leaves),
        [&](std::ptrdiff_t i) {
            const auto k = static_cast<std::size_t>(i);
            tree.runLeaf(k, begin + detail::leafBegin(n, leaves, k), begin + detail::leafBegin(n, leaves, k + 1));
        },
        nThreads, 0);
}

//! RcppParallel's parallelFor() of its TBB backend: the same as parallelFor().
inline void tbbParallelFor(std::size_t begin, std::size_t end, Worker& worker, std::size_t grainSize = 1,
                           int numThreads = -1)
{
    parallelFor(begin, end, worker, grainSize, numThreads);
}

//! RcppParallel's parallelFor() of its TinyThread backend: the same as parallelFor().
inline void ttParallelFor(std::size_t begin, std::size_t end, Worker& worker, std::size_t grainSize = 1)
{
    parallelFor(begin, end, worker, grainSize);
}

//! RcppParallel's parallelReduce() of its TBB backend: the same as parallelReduce().
template <typename Reducer>
void tbbParallelReduce(std::size_t begin, std::size_t end, Reducer& reducer, std::size_t grainSize = 1,
                       int numThreads = -1)
{
    parallelReduce(begin, end, reducer, grainSize, numThreads);
}

//! RcppParallel's parallelReduce() of its TinyThread backend: the same as parallelReduce().
template <typename Reducer>
void ttParallelReduce(std::size_t begin, std::size_t end, Reducer& reducer, std::size_t grainSize = 1)
{
    parallelReduce(begin, end, reducer, grainSize);
}

}  // namespace RcppParallel
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
