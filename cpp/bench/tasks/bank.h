// bank: co-dependent, fine-grained (the shape of INNCABS's "Round" and
// "Intersim": tasks that each need two mutexes at once).
// A sea of tasks, spawned in a loop: each does a batch of transfers, each
// between two of 64 accounts chosen at random (some hashing, outside any
// lock); a transfer locks both accounts with std::lock (deadlock avoidance),
// computes the amount while holding them (a shorter chain of hashing: the
// critical section), and moves the money. With 2 threads about one transfer
// in 16 finds an account taken.
// Amounts depend only on the task and transfer number, so the final balances
// do not depend on the order in which transfers happen.
// Fine grain: a task per transfer, with little hashing (about 100 ns a task),
// so that most of a task's time is spent spawning it and taking the locks.
#pragma once

#include "harness.h"

#include <mutex>

namespace bench {
namespace bank {

struct alignas(64) Account {
    std::mutex m;
    long balance = 0;
};

struct Params {
    int accounts, tasks, transfersPerTask, roundsInside, roundsOutside;
};

//! One task: transfers k = 0 .. transfersPerTask-1 of task `t`.
BENCH_KERNEL inline void transfers(std::vector<Account>& acc, const Params& p, int t)
{
    noteThread();
    for (int k = 0; k < p.transfersPerTask; ++k) {
        // Outside the locks: decide which accounts (some work of its own).
        std::uint64_t h = (static_cast<std::uint64_t>(t) << 20) ^ static_cast<std::uint64_t>(k);
        for (int r = 0; r < p.roundsOutside; ++r) h = mix64(h);
        const int from = static_cast<int>(h % p.accounts);
        int to = static_cast<int>((h >> 32) % (p.accounts - 1));
        if (to >= from) ++to;
        Account& a = acc[from];
        Account& b = acc[to];
        std::lock(a.m, b.m);
        std::lock_guard<std::mutex> la(a.m, std::adopt_lock), lb(b.m, std::adopt_lock);
        // Inside: the amount (the critical section's work).
        std::uint64_t x = h;
        for (int r = 0; r < p.roundsInside; ++r) x = mix64(x);
        const long amount = static_cast<long>(x % 1000);
        a.balance -= amount;
        b.balance += amount;
    }
}

inline void seq(std::vector<Account>& acc, const Params& p)
{
    for (int t = 0; t < p.tasks; ++t) transfers(acc, p, t);
}

template <class A>
void futures(std::vector<Account>& acc, const Params& p)
{
    std::vector<FutureOf<A, void>> f;
    f.reserve(p.tasks);
    for (int t = 0; t < p.tasks; ++t) f.push_back(A::spawn([&acc, &p, t] { transfers(acc, p, t); }));
    for (auto& x : f) x.get();
}

template <class G>
void group(std::vector<Account>& acc, const Params& p)
{
    G g;
    for (int t = 0; t < p.tasks; ++t) g.run([&acc, &p, t] { transfers(acc, p, t); });
    g.wait();
}

inline void omp(std::vector<Account>& acc, const Params& p)
{
    for (int t = 0; t < p.tasks; ++t) {
#pragma omp task shared(acc, p) firstprivate(t)
        transfers(acc, p, t);
    }
#pragma omp taskwait
}

class Bench : public Benchmark {
public:
    const char* name() const override { return "bank"; }
    const char* shape() const override { return "co-dependent"; }
    std::string params() const override
    {
        return std::to_string(p_.accounts) + " accounts, " + std::to_string(p_.tasks) + " tasks x " +
               std::to_string(p_.transfersPerTask) + " transfers (std::lock of 2)" +
               (p_.transfersPerTask == 1 ? ", a task per transfer" : "");
    }
    bool hasFine() const override { return true; }
    void setUp(bool quick, Grain grain) override
    {
        if (grain == Grain::fine)
            p_ = quick ? Params{64, 20000, 1, 4, 16} : Params{64, 3000000, 1, 4, 16};
        else
            p_ = quick ? Params{64, 2000, 20, 10, 30} : Params{64, 20000, 150, 20, 100};
        acc_ = std::vector<Account>(p_.accounts);
        seq(acc_, p_);  // the reference: the sequential balances
        ref_.clear();
        long total = 0;
        for (auto& a : acc_) {
            ref_.push_back(a.balance);
            total += a.balance;
        }
        refOk_ = total == 0;  // money is neither made nor lost
    }
    void reset() override
    {
        for (auto& a : acc_) a.balance = 0;
    }
    void run(Method m) override
    {
        switch (m) {
        case Method::seq: seq(acc_, p_); break;
        case Method::spoolAsync: futures<SpoolAsync>(acc_, p_); break;
        case Method::spoolOptional: futures<SpoolOptional>(acc_, p_); break;
        case Method::stdAsync: futures<StdAsync>(acc_, p_); break;
        case Method::spoolGroup: group<RcppSpool::TaskGroup>(acc_, p_); break;
        case Method::tbb: group<tbb::task_group>(acc_, p_); break;
        case Method::omp: omp(acc_, p_); break;
        }
    }
    bool verify() override
    {
        for (std::size_t i = 0; i < acc_.size(); ++i)
            if (acc_[i].balance != ref_[i]) return false;
        return refOk_;
    }

private:
    Params p_{0, 0, 0, 0, 0};
    std::vector<Account> acc_;
    std::vector<long> ref_;
    bool refOk_ = false;
};

}  // namespace bank
}  // namespace bench
