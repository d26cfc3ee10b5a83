// knapsack: recursive unbalanced with pruning (the shape of INNCABS's
// "Floorplan" and "QAP": branch and bound, an atomic incumbent).
// 0/1 knapsack by depth-first branch and bound, on a hard instance (see
// makeProblem): at item i take it (if it fits) or skip it; a subtree is
// pruned when its fractional upper bound cannot beat the best value found so
// far, which all tasks share as an atomic. In the first `depth` levels the
// skip branch is a task while the take branch continues inline, so one thread
// alone explores in the sequential order. How much a parallel run prunes
// depends on when each task sees the incumbent: the work varies a little.
// Fine grain: a task per branch down to the last 5 items (a leaf searches at
// most 63 nodes): with no cutoff at all OpenMP took 140 times the sequential time.
#pragma once

#include "harness.h"

namespace bench {
namespace knapsack {

struct Problem {
    int n = 0;
    long capacity = 0;
    std::vector<long> w, v;    // sorted by v/w, decreasing
    std::vector<long> W, V;    // prefix sums: W[i] = w[0] + ... + w[i-1]
};

//! The best value found so far, shared by all tasks.
struct Incumbent {
    std::atomic<long> best{0};
    void offer(long value)
    {
        long b = best.load(std::memory_order_relaxed);
        while (value > b && !best.compare_exchange_weak(b, value, std::memory_order_relaxed)) {
        }
    }
    long get() const { return best.load(std::memory_order_relaxed); }
};

//! An upper bound on what items i.. can add with room `cap`: greedy by
//! density, the first item that does not fit taken fractionally.
inline long bound(const Problem& p, int i, long cap)
{
    // the last j with W[j] - W[i] <= cap
    const int j = static_cast<int>(std::upper_bound(p.W.begin() + i, p.W.end(), p.W[i] + cap) - p.W.begin()) - 1;
    long b = p.V[j] - p.V[i];
    if (j < p.n) b += (cap - (p.W[j] - p.W[i])) * p.v[j] / p.w[j];
    return b;
}

//! The sequential search below one node: items i.., room cap, value so far val.
inline void search(const Problem& p, Incumbent& inc, int i, long cap, long val)
{
    inc.offer(val);
    if (i == p.n || val + bound(p, i, cap) <= inc.get()) return;
    if (p.w[i] <= cap) search(p, inc, i + 1, cap - p.w[i], val + p.v[i]);
    search(p, inc, i + 1, cap, val);
}

BENCH_KERNEL inline void leaf(const Problem& p, Incumbent& inc, int i, long cap, long val)
{
    noteThread();
    search(p, inc, i, cap, val);
}

// All versions: the search below (i, cap, val); items < depth branch in tasks.

inline void seq(const Problem& p, Incumbent& inc, int i, long cap, long val, int depth)
{
    if (i >= depth) return leaf(p, inc, i, cap, val);
    inc.offer(val);
    if (i == p.n || val + bound(p, i, cap) <= inc.get()) return;
    if (p.w[i] <= cap) seq(p, inc, i + 1, cap - p.w[i], val + p.v[i], depth);
    seq(p, inc, i + 1, cap, val, depth);
}

template <class A>
void futures(const Problem& p, Incumbent& inc, int i, long cap, long val, int depth)
{
    if (i >= depth) return leaf(p, inc, i, cap, val);
    inc.offer(val);
    if (i == p.n || val + bound(p, i, cap) <= inc.get()) return;
    auto skip = A::spawn([&p, &inc, i, cap, val, depth] { futures<A>(p, inc, i + 1, cap, val, depth); });
    if (p.w[i] <= cap) futures<A>(p, inc, i + 1, cap - p.w[i], val + p.v[i], depth);
    skip.get();
}

template <class G>
void group(const Problem& p, Incumbent& inc, int i, long cap, long val, int depth)
{
    if (i >= depth) return leaf(p, inc, i, cap, val);
    inc.offer(val);
    if (i == p.n || val + bound(p, i, cap) <= inc.get()) return;
    G g;
    g.run([&p, &inc, i, cap, val, depth] { group<G>(p, inc, i + 1, cap, val, depth); });
    if (p.w[i] <= cap) group<G>(p, inc, i + 1, cap - p.w[i], val + p.v[i], depth);
    g.wait();
}

inline void omp(const Problem& p, Incumbent& inc, int i, long cap, long val, int depth)
{
    if (i >= depth) return leaf(p, inc, i, cap, val);
    inc.offer(val);
    if (i == p.n || val + bound(p, i, cap) <= inc.get()) return;
#pragma omp task shared(p, inc) firstprivate(i, cap, val, depth)
    omp(p, inc, i + 1, cap, val, depth);
    if (p.w[i] <= cap) omp(p, inc, i + 1, cap - p.w[i], val + p.v[i], depth);
#pragma omp taskwait
}

//! The optimum by dynamic programming over capacities (the reference).
inline long optimum(const Problem& p)
{
    std::vector<long> best(p.capacity + 1, 0);
    for (int i = 0; i < p.n; ++i)
        for (long c = p.capacity; c >= p.w[i]; --c) best[c] = std::max(best[c], best[c - p.w[i]] + p.v[i]);
    return best[p.capacity];
}

//! A hard instance: value = weight, weights even, capacity odd (Todd's and
//! Chvatal's trick). No subset fills the knapsack, so the search finds the
//! optimum (capacity - 1) at once but must then prove it, and the bound
//! prunes only where the items left cannot fill the room: a stable amount of
//! work (unlike random instances, whose search time jumps by orders of
//! magnitude from one seed to the next) that is still pruned.
inline Problem makeProblem(int n, long range, std::uint64_t seed)
{
    Rng r(seed);
    std::vector<std::pair<long, long>> items;  // (w, v)
    long total = 0;
    for (int i = 0; i < n; ++i) {
        const long w = 2 * (1 + static_cast<long>(r.below(range)));
        items.push_back({w, w});
        total += w;
    }
    // By value density (here all equal), then the heaviest first.
    std::sort(items.begin(), items.end(), [](auto a, auto b) {
        const long x = a.second * b.first, y = b.second * a.first;
        return x != y ? x > y : a.first > b.first;
    });
    Problem p;
    p.n = n;
    p.capacity = (total / 2) | 1;
    p.W.assign(n + 1, 0);
    p.V.assign(n + 1, 0);
    for (int i = 0; i < n; ++i) {
        p.w.push_back(items[i].first);
        p.v.push_back(items[i].second);
        p.W[i + 1] = p.W[i] + items[i].first;
        p.V[i + 1] = p.V[i] + items[i].second;
    }
    return p;
}

class Bench : public Benchmark {
public:
    const char* name() const override { return "knapsack"; }
    const char* shape() const override { return "recursive unbalanced"; }
    bool hasFine() const override { return true; }
    std::string params() const override
    {
        return "items=" + std::to_string(p_.n) + " capacity=" + std::to_string(p_.capacity) +
               " taskDepth=" + std::to_string(depth_) +
               (depth_ >= p_.n - kFineLeafItems ? " (a task per branch but the last " +
                                                      std::to_string(kFineLeafItems) + " items)"
                                                : "");
    }
    void setUp(bool quick, Grain grain) override
    {
        if (grain == Grain::fine) {
            p_ = quick ? makeProblem(16, 1000, 1) : makeProblem(31, 1000, 1);
            depth_ = p_.n - kFineLeafItems;
        } else {
            p_ = quick ? makeProblem(22, 1000, 1) : makeProblem(34, 1000, 1);
            depth_ = quick ? 8 : 16;
        }
        expect_ = optimum(p_);
    }
    void reset() override { inc_.best.store(0); }
    void run(Method m) override
    {
        switch (m) {
        case Method::seq: seq(p_, inc_, 0, p_.capacity, 0, depth_); break;
        case Method::spoolAsync: futures<SpoolAsync>(p_, inc_, 0, p_.capacity, 0, depth_); break;
        case Method::spoolOptional: futures<SpoolOptional>(p_, inc_, 0, p_.capacity, 0, depth_); break;
        case Method::stdAsync: futures<StdAsync>(p_, inc_, 0, p_.capacity, 0, depth_); break;
        case Method::spoolGroup: group<RcppSpool::TaskGroup>(p_, inc_, 0, p_.capacity, 0, depth_); break;
        case Method::tbb: group<tbb::task_group>(p_, inc_, 0, p_.capacity, 0, depth_); break;
        case Method::omp: omp(p_, inc_, 0, p_.capacity, 0, depth_); break;
        }
    }
    bool verify() override { return inc_.get() == expect_; }


private:
    //! Fine grain: the items below the last task (a leaf explores at most
    //! 63 nodes, usually far fewer after pruning).
    static constexpr int kFineLeafItems = 5;
    Problem p_;
    int depth_ = 0;
    Incumbent inc_;
    long expect_ = 0;
};

}  // namespace knapsack
}  // namespace bench
