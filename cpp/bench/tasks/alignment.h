// alignment: loop-like, coarse (INNCABS/AKM "Alignment").
// All-pairs global alignment scores (Needleman-Wunsch, linear gap penalty)
// of S random protein-like sequences: the thread that walks the pairs (i, j),
// i < j, spawns one task per pair, then waits for them all. Every task is a
// quadratic dynamic programme over two sequences; tasks differ in size with
// the sequences' lengths.
#pragma once

#include "harness.h"

namespace bench {
namespace alignment {

//! The global alignment score of a and b: match +5, mismatch -3, gap -4.
BENCH_KERNEL inline int score(const std::string& a, const std::string& b)
{
    noteThread();
    const int match = 5, mismatch = -3, gap = -4;
    const std::size_t m = b.size();
    std::vector<int> prev(m + 1), cur(m + 1);
    for (std::size_t j = 0; j <= m; ++j) prev[j] = gap * static_cast<int>(j);
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = gap * static_cast<int>(i);
        const char ai = a[i - 1];
        for (std::size_t j = 1; j <= m; ++j) {
            const int diag = prev[j - 1] + (ai == b[j - 1] ? match : mismatch);
            cur[j] = std::max(diag, std::max(prev[j], cur[j - 1]) + gap);
        }
        std::swap(prev, cur);
    }
    return prev[m];
}

// All versions fill scores[i * S + j] for every pair i < j.

inline void seq(const std::vector<std::string>& s, std::vector<int>& scores)
{
    const std::size_t n = s.size();
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) scores[i * n + j] = score(s[i], s[j]);
}

template <class A>
void futures(const std::vector<std::string>& s, std::vector<int>& scores)
{
    const std::size_t n = s.size();
    std::vector<FutureOf<A, void>> f;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j)
            f.push_back(A::spawn([&s, &scores, i, j, n] { scores[i * n + j] = score(s[i], s[j]); }));
    for (auto& x : f) x.get();
}

template <class G>
void group(const std::vector<std::string>& s, std::vector<int>& scores)
{
    const std::size_t n = s.size();
    G g;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) g.run([&s, &scores, i, j, n] { scores[i * n + j] = score(s[i], s[j]); });
    g.wait();
}

inline void omp(const std::vector<std::string>& s, std::vector<int>& scores)
{
    const std::size_t n = s.size();
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
#pragma omp task shared(s, scores) firstprivate(i, j, n)
            scores[i * n + j] = score(s[i], s[j]);
        }
#pragma omp taskwait
}

class Bench : public Benchmark {
public:
    const char* name() const override { return "alignment"; }
    const char* shape() const override { return "loop-like"; }
    std::string params() const override
    {
        return std::to_string(seqs_.size()) + " sequences of length " + std::to_string(minLen_) + "-" +
               std::to_string(maxLen_) + " (" + std::to_string(seqs_.size() * (seqs_.size() - 1) / 2) + " pairs)";
    }
    void setUp(bool quick, Grain) override
    {
        const int n = quick ? 16 : 55;
        minLen_ = quick ? 200 : 500;
        maxLen_ = quick ? 400 : 1000;
        static const char alphabet[] = "ACDEFGHIKLMNPQRSTVWY";
        Rng r(17);
        seqs_.clear();
        for (int i = 0; i < n; ++i) {
            std::string s(minLen_ + r.below(maxLen_ - minLen_ + 1), 'A');
            for (auto& c : s) c = alphabet[r.below(20)];
            seqs_.push_back(std::move(s));
        }
        scores_.assign(static_cast<std::size_t>(n) * n, 0);
        seq(seqs_, scores_);
        ref_ = scores_;  // the reference: the sequential scores
        // ... which agree with two known cases: a sequence with itself scores
        // 5 per letter, and with the empty sequence -4 per letter.
        refOk_ = score(seqs_[0], seqs_[0]) == 5 * static_cast<int>(seqs_[0].size()) &&
                 score(seqs_[0], "") == -4 * static_cast<int>(seqs_[0].size());
    }
    void reset() override { std::fill(scores_.begin(), scores_.end(), 0); }
    void run(Method m) override
    {
        switch (m) {
        case Method::seq: seq(seqs_, scores_); break;
        case Method::spoolAsync: futures<SpoolAsync>(seqs_, scores_); break;
        case Method::spoolOptional: futures<SpoolOptional>(seqs_, scores_); break;
        case Method::stdAsync: futures<StdAsync>(seqs_, scores_); break;
        case Method::spoolGroup: group<RcppSpool::TaskGroup>(seqs_, scores_); break;
        case Method::tbb: group<tbb::task_group>(seqs_, scores_); break;
        case Method::omp: omp(seqs_, scores_); break;
        }
    }
    bool verify() override { return refOk_ && scores_ == ref_; }

private:
    std::vector<std::string> seqs_;
    std::vector<int> scores_, ref_;
    bool refOk_ = false;
    std::size_t minLen_ = 0, maxLen_ = 0;
};

}  // namespace alignment
}  // namespace bench
