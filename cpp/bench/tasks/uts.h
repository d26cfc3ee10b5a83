// uts: recursive unbalanced, fine-grained (INNCABS/UNC "UTS", Unbalanced Tree
// Search). Counts the nodes of a random binomial tree generated on the fly:
// the root has b0 children; every other node has m children with probability
// q (else none), with q*m just below 1, so subtrees range from one node to
// tens of thousands. A node's identity is a hash of its parent's (a chain of
// `rounds` mixing steps stands in for UTS's SHA-1). A task per child node,
// no cutoff: the schedule must balance a tree nobody can predict.
// Fine grain: the same tree shape with 8 mixing rounds per node instead of
// 320 (tens of ns of work per task), and more children of the root.
#pragma once

#include "harness.h"

namespace bench {
namespace uts {

struct Tree {
    int b0, m;
    double q;
    int rounds;
};

//! The identity of child `i` of the node `id`: `rounds` dependent mixing steps.
BENCH_KERNEL inline std::uint64_t childId(std::uint64_t id, int i, int rounds)
{
    std::uint64_t x = id ^ (0x632BE59BD9B4E019ull * static_cast<std::uint64_t>(i + 1));
    for (int r = 0; r < rounds; ++r) x = mix64(x);
    return x;
}

//! How many children a non-root node has.
inline int numChildren(const Tree& t, std::uint64_t id)
{
    noteThread();
    return (id >> 11) * (1.0 / 9007199254740992.0) < t.q ? t.m : 0;
}

// All versions: the number of nodes in the subtree of `id` (a non-root node).

inline long seq(const Tree& t, std::uint64_t id)
{
    const int k = numChildren(t, id);
    long n = 1;
    for (int i = 0; i < k; ++i) n += seq(t, childId(id, i, t.rounds));
    return n;
}

template <class A>
long futures(const Tree& t, std::uint64_t id)
{
    const int k = numChildren(t, id);
    if (k == 0) return 1;
    std::vector<FutureOf<A, long>> f;
    f.reserve(k);
    for (int i = 0; i < k; ++i) f.push_back(A::spawn([&t, id, i] { return futures<A>(t, childId(id, i, t.rounds)); }));
    long n = 1;
    for (auto& x : f) n += x.get();
    return n;
}

template <class G>
long group(const Tree& t, std::uint64_t id)
{
    const int k = numChildren(t, id);
    if (k == 0) return 1;
    long counts[16] = {0};  // m <= 16
    G g;
    for (int i = 0; i < k; ++i) g.run([&t, &counts, id, i] { counts[i] = group<G>(t, childId(id, i, t.rounds)); });
    g.wait();
    long n = 1;
    for (int i = 0; i < k; ++i) n += counts[i];
    return n;
}

inline long omp(const Tree& t, std::uint64_t id)
{
    const int k = numChildren(t, id);
    if (k == 0) return 1;
    long counts[16] = {0};
    for (int i = 0; i < k; ++i) {
#pragma omp task shared(t, counts) firstprivate(id, i)
        counts[i] = omp(t, childId(id, i, t.rounds));
    }
#pragma omp taskwait
    long n = 1;
    for (int i = 0; i < k; ++i) n += counts[i];
    return n;
}

// The root: b0 children, a task each.

inline long rootSeq(const Tree& t, std::uint64_t root)
{
    long n = 1;
    for (int i = 0; i < t.b0; ++i) n += seq(t, childId(root, i, t.rounds));
    return n;
}

template <class A>
long rootFutures(const Tree& t, std::uint64_t root)
{
    std::vector<FutureOf<A, long>> f;
    f.reserve(t.b0);
    for (int i = 0; i < t.b0; ++i)
        f.push_back(A::spawn([&t, root, i] { return futures<A>(t, childId(root, i, t.rounds)); }));
    long n = 1;
    for (auto& x : f) n += x.get();
    return n;
}

template <class G>
long rootGroup(const Tree& t, std::uint64_t root)
{
    std::vector<long> counts(t.b0, 0);
    G g;
    for (int i = 0; i < t.b0; ++i)
        g.run([&t, &counts, root, i] { counts[i] = group<G>(t, childId(root, i, t.rounds)); });
    g.wait();
    long n = 1;
    for (long c : counts) n += c;
    return n;
}

inline long rootOmp(const Tree& t, std::uint64_t root)
{
    std::vector<long> counts(t.b0, 0);
    long* out = counts.data();
    for (int i = 0; i < t.b0; ++i) {
#pragma omp task shared(t) firstprivate(out, root, i)
        out[i] = omp(t, childId(root, i, t.rounds));
    }
#pragma omp taskwait
    long n = 1;
    for (long c : counts) n += c;
    return n;
}

//! The reference count: an explicit-stack traversal, independent of the
//! recursive versions.
inline long countIteratively(const Tree& t, std::uint64_t root)
{
    std::vector<std::uint64_t> stack;
    for (int i = 0; i < t.b0; ++i) stack.push_back(childId(root, i, t.rounds));
    long n = 1;
    while (!stack.empty()) {
        const std::uint64_t id = stack.back();
        stack.pop_back();
        ++n;
        for (int i = 0, k = numChildren(t, id); i < k; ++i) stack.push_back(childId(id, i, t.rounds));
    }
    return n;
}

class Bench : public Benchmark {
public:
    const char* name() const override { return "uts"; }
    const char* shape() const override { return "recursive unbalanced"; }
    std::string params() const override
    {
        char s[160];
        std::snprintf(s, sizeof s, "binomial b0=%d m=%d q=%.4f rounds=%d (%ld nodes)", tree_.b0, tree_.m, tree_.q,
                      tree_.rounds, expect_);
        return s;
    }
    bool hasFine() const override { return true; }
    void setUp(bool quick, Grain grain) override
    {
        if (grain == Grain::fine)
            tree_ = quick ? Tree{500, 4, 0.2475, 8} : Tree{100000, 4, 0.2475, 8};
        else
            tree_ = quick ? Tree{500, 4, 0.2475, 64} : Tree{16000, 4, 0.2475, 320};
        expect_ = countIteratively(tree_, kRoot);
    }
    void reset() override { result_ = -1; }
    void run(Method m) override
    {
        switch (m) {
        case Method::seq: result_ = rootSeq(tree_, kRoot); break;
        case Method::spoolAsync: result_ = rootFutures<SpoolAsync>(tree_, kRoot); break;
        case Method::spoolOptional: result_ = rootFutures<SpoolOptional>(tree_, kRoot); break;
        case Method::stdAsync: result_ = rootFutures<StdAsync>(tree_, kRoot); break;
        case Method::spoolGroup: result_ = rootGroup<RcppSpool::TaskGroup>(tree_, kRoot); break;
        case Method::tbb: result_ = rootGroup<tbb::task_group>(tree_, kRoot); break;
        case Method::omp: result_ = rootOmp(tree_, kRoot); break;
        }
    }
    bool verify() override { return result_ == expect_; }

private:
    static constexpr std::uint64_t kRoot = 0x5EEDull;
    Tree tree_{0, 0, 0, 0};
    long expect_ = 0, result_ = -1;
};

}  // namespace uts
}  // namespace bench
