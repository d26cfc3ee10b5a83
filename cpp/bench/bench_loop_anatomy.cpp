// Where the time of one parallel loop call goes: P6's loop (y = a x + y over
// 1e6 doubles, 2 threads) with RcppSpool's range body and with OpenMP's
// static split, each call taken apart by the pieces its threads ran.
// Usage: bench_loop_anatomy [rounds=40]
//
// A round is a block of 25 calls of each method (the previous method's
// threads settled before each block), the order turning each round. For
// each method, medians over all calls:
//   wall    the call, as its caller sees it
//   start   from the call to the first element of the busiest thread
//   busy    the busiest thread's time in the body, and all threads' together
//   gaps    the busiest thread's time between its pieces
//   end     from the busiest thread's last element to the call's return
//   skew    from the first thread's last element to the last thread's
//   pieces  pieces a thread ran
// wall = start + busy + gaps + end for the busiest thread, call by call.
// Both methods run the same inner loop (g++ -O2 compiles the two alike), so
// a difference in busy time is the machine or the pieces, and one in the
// rest is the library's own cost. The logs read the clock twice a piece: the
// two methods also run unlogged, for their wall time alone.
// Then, round by round, RcppSpool's median over OpenMP's, apart for the
// rounds where OpenMP's threads ended within 3 us of each other (both cores
// ran at the same speed: a static split is then the best there is) and for
// the others. Timestamps: the TSC on x86-64, else steady_clock.
#include <RcppSpool.h>

#include "engine_work.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#ifdef HAVE_OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

using namespace engine_work;

namespace {

std::uint64_t ticks()
{
#if defined(__x86_64__)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
#endif
}

//! Nanoseconds a tick lasts, measured against steady_clock over 50 ms.
double nsPerTick()
{
    const auto c0 = Clock::now();
    const std::uint64_t t0 = ticks();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::uint64_t t1 = ticks();
    return std::chrono::duration<double, std::nano>(Clock::now() - c0).count() / static_cast<double>(t1 - t0);
}

//! The pieces one thread ran in one call, [begin, end) in ticks.
struct alignas(64) ThreadLog {
    static constexpr int kMax = 256;
    std::uint64_t begin[kMax], end[kMax];
    int n = 0;
    void add(std::uint64_t b, std::uint64_t e)
    {
        if (n < kMax) begin[n] = b, end[n] = e, ++n;
    }
};
constexpr int kThreads = 8;
ThreadLog logs[kThreads];
std::atomic<int> nextSlot{0};

//! This thread's log (a slot per thread, for the whole run).
ThreadLog& myLog()
{
    thread_local int slot = nextSlot.fetch_add(1) % kThreads;
    return logs[slot];
}

//! One call's anatomy, in ticks.
struct Anatomy {
    double wall, start, busyMax, busySum, gaps, end, skew, pieces;
};

Anatomy dissect(std::uint64_t call0, std::uint64_t call1)
{
    Anatomy a{static_cast<double>(call1 - call0), 0, 0, 0, 0, 0, 0, 0};
    std::uint64_t firstEnd = ~std::uint64_t(0), lastEnd = 0;
    int threads = 0, busiest = -1;
    std::uint64_t most = 0;
    for (int t = 0; t < kThreads; ++t) {
        const ThreadLog& l = logs[t];
        if (l.n == 0) continue;
        ++threads;
        std::uint64_t busy = 0;
        for (int i = 0; i < l.n; ++i) busy += l.end[i] - l.begin[i];
        a.busySum += static_cast<double>(busy);
        a.pieces += l.n;
        firstEnd = std::min(firstEnd, l.end[l.n - 1]);
        lastEnd = std::max(lastEnd, l.end[l.n - 1]);
        if (busy > most) most = busy, busiest = t;
    }
    if (busiest < 0) return a;
    const ThreadLog& b = logs[busiest];
    a.busyMax = static_cast<double>(most);
    a.start = static_cast<double>(b.begin[0] - call0);
    a.end = static_cast<double>(call1 - b.end[b.n - 1]);
    a.gaps = static_cast<double>(b.end[b.n - 1] - b.begin[0]) - a.busyMax;
    a.skew = static_cast<double>(lastEnd - firstEnd);
    a.pieces /= threads;
    return a;
}

}  // namespace

int main(int argc, char** argv)
{
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 40;
    const int nThreads = 2, perBlock = 25;
    RcppSpool::ThreadPool::globalInstance().setNumThreads(nThreads);
    const std::ptrdiff_t n = 1000000;
    std::vector<double> x(n, 1.5), y(n, 0.5);
    const double a = 1.0000001;
    double* xp = x.data();
    double* yp = y.data();
    // The body, logging each piece it runs; and the same without logs.
    auto axpyLogged = [=](std::ptrdiff_t b, std::ptrdiff_t e) {
        const std::uint64_t t0 = ticks();
        for (std::ptrdiff_t i = b; i < e; ++i) yp[i] = a * xp[i] + yp[i];
        myLog().add(t0, ticks());
    };
    auto axpy = [=](std::ptrdiff_t b, std::ptrdiff_t e) {
        for (std::ptrdiff_t i = b; i < e; ++i) yp[i] = a * xp[i] + yp[i];
    };
    struct Method {
        const char* name;
        std::function<void()> call;
        std::vector<Anatomy> calls;
    };
    // Logged methods first (their anatomy), then the same unlogged (their
    // wall time without the logs' clock reads: two per piece, so ~15 a
    // thread for RcppSpool and one for OpenMP), in this order.
    enum { kSpool, kOmp, kSpoolUnlogged, kOmpUnlogged, kMethods };
    std::vector<Method> methods = {
        {"RcppSpool parallelFor, range body", [&] { RcppSpool::parallelFor(0, n, axpyLogged, nThreads); }, {}}};
#ifdef HAVE_OPENMP
    // schedule(static)'s split of the range, one piece per thread.
    auto ompStatic = [&](auto& body) {
#pragma omp parallel num_threads(nThreads)
        {
            const std::ptrdiff_t t = omp_get_thread_num(), p = omp_get_num_threads();
            body(t * n / p, (t + 1) * n / p);
        }
    };
    methods.push_back({"OpenMP static", [&] { ompStatic(axpyLogged); }, {}});
    methods.push_back({"RcppSpool, unlogged", [&] { RcppSpool::parallelFor(0, n, axpy, nThreads); }, {}});
    methods.push_back({"OpenMP static, unlogged", [&] { ompStatic(axpy); }, {}});
#endif
    for (int round = 0; round < rounds; ++round)
        for (std::size_t j = 0; j < methods.size(); ++j) {
            const std::size_t k = (j + static_cast<std::size_t>(round)) % methods.size();
            std::this_thread::sleep_for(kSettle);
            for (int c = 0; c < perBlock + 5; ++c) {  // the first 5: warm-up
                for (auto& l : logs) l.n = 0;
                const std::uint64_t t0 = ticks();
                methods[k].call();
                const std::uint64_t t1 = ticks();
                if (c >= 5) methods[k].calls.push_back(dissect(t0, t1));
            }
        }
    const double us = nsPerTick() / 1e3;

    std::printf("One call of P6's loop (1e6 doubles, %d threads), medians of %d calls, us\n", nThreads,
                rounds * perBlock);
    std::printf("%-34s %8s %7s %8s %8s %6s %6s %6s %6s\n", "method", "wall", "start", "busy", "busy/all", "gaps",
                "end", "skew", "pieces");
    for (auto& m : methods) {
        auto med = [&](double Anatomy::*field) {
            std::vector<double> v;
            for (auto& c : m.calls) v.push_back(c.*field);
            return median(v);
        };
        if (med(&Anatomy::pieces) == 0) {
            std::printf("%-34s %8.2f\n", m.name, med(&Anatomy::wall) * us);
            continue;
        }
        std::printf("%-34s %8.2f %7.2f %8.2f %8.2f %6.2f %6.2f %6.2f %6.1f\n", m.name, med(&Anatomy::wall) * us,
                    med(&Anatomy::start) * us, med(&Anatomy::busyMax) * us, med(&Anatomy::busySum) * us,
                    med(&Anatomy::gaps) * us, med(&Anatomy::end) * us, med(&Anatomy::skew) * us,
                    med(&Anatomy::pieces));
    }
    if (methods.size() < kMethods) return 0;  // no OpenMP
    // Round by round: the median of each method's block (calls are stored
    // block after block).
    auto blockMedian = [&](const Method& m, int round, double Anatomy::*field) {
        std::vector<double> v;
        for (int c = 0; c < perBlock; ++c) v.push_back(m.calls[static_cast<std::size_t>(round * perBlock + c)].*field);
        return median(v);
    };
    auto ratio = [&](std::size_t ours, std::size_t theirs, int round, double Anatomy::*field) {
        return blockMedian(methods[ours], round, field) / blockMedian(methods[theirs], round, field);
    };
    struct Rounds {
        std::vector<double> wall, busy, plainWall;
    } even, uneven;
    for (int round = 0; round < rounds; ++round) {
        Rounds& r = blockMedian(methods[kOmp], round, &Anatomy::skew) * us < 3 ? even : uneven;
        r.wall.push_back(ratio(kSpool, kOmp, round, &Anatomy::wall));
        r.busy.push_back(ratio(kSpool, kOmp, round, &Anatomy::busySum));
        r.plainWall.push_back(ratio(kSpoolUnlogged, kOmpUnlogged, round, &Anatomy::wall));
    }
    std::printf("RcppSpool / OpenMP static, medians of per-round ratios (wall and busy/all logged; wall unlogged):\n");
    auto show = [](const char* what, const Rounds& r) {
        if (r.wall.empty()) return;
        std::printf("  %3zu rounds, %-42s %.4f %.4f; %.4f\n", r.wall.size(), what, median(r.wall), median(r.busy),
                    median(r.plainWall));
    };
    show("OpenMP's threads ended within 3 us:", even);
    show("OpenMP's threads ended further apart:", uneven);
    return 0;
}
