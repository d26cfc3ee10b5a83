// What one spawn costs, in instructions: fib(n) with one task per call, run
// under callgrind by bench/spawn-cost.sh (which subtracts the plain
// recursion and divides by the spawns: fib(22) makes 28,656).
//
//   spawn_cost MODE [n]
//   MODE: plain | async | deferred | group | tbb-plain | tbb
//
// The recursion runs as one task on a pool of one worker (the global pool,
// set to one thread; oneTBB: an arena of one thread), so that every
// spawn is taken back by its owner, as a spawn nobody steals. Only the
// function spawn_cost_measured() is counted (callgrind --toggle-collect):
// the pool's start and end are not a spawn's cost. An R client compiles
// this file too (bench/spawn-cost.sh --r, SPAWN_COST_NO_MAIN), to count a
// spawn through RcppSpool's runtime in an R session.
#include <RcppSpool.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>

#ifdef HAVE_TBB
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#endif

namespace {

// noinline, each: how far g++ inlines a recursion into itself depends on the
// whole file (a change elsewhere moved plain fib by 2 instructions a call).
[[gnu::noinline]] long plain(int n) { return n < 2 ? n : plain(n - 1) + plain(n - 2); }

//! The README's fib: async() for one branch, the other a plain call.
[[gnu::noinline]] long viaAsync(int n)
{
    if (n < 2) return n;
    auto x = RcppSpool::async([n] { return viaAsync(n - 1); });
    long y = viaAsync(n - 2);
    return x.get() + y;
}

//! The same with the library's choice: async | deferred.
[[gnu::noinline]] long viaDeferred(int n)
{
    if (n < 2) return n;
    auto x = RcppSpool::async(std::launch::async | std::launch::deferred, [n] { return viaDeferred(n - 1); });
    long y = viaDeferred(n - 2);
    return x.get() + y;
}

//! A group per call: run() for one branch, the other a plain call.
template <class G>
[[gnu::noinline]] long viaGroup(int n)
{
    if (n < 2) return n;
    long x = 0, y = 0;
    G g;
    g.run([&] { x = viaGroup<G>(n - 1); });
    y = viaGroup<G>(n - 2);
    g.wait();
    return x + y;
}

}  // namespace

//! The one function callgrind counts (extern "C": a name to toggle on).
extern "C" [[gnu::noinline]] long spawn_cost_measured(int mode, int n)
{
    switch (mode) {
    case 0: return plain(n);
    case 1: return viaAsync(n);
    case 2: return viaDeferred(n);
    case 3: return viaGroup<RcppSpool::TaskGroup>(n);
#ifdef HAVE_TBB
    case 4: return plain(n);
    case 5: return viaGroup<tbb::task_group>(n);
#endif
    default: return -1;
    }
}

#ifndef SPAWN_COST_NO_MAIN
int main(int argc, char** argv)
{
    static const char* const modes[] = {"plain", "async", "deferred", "group", "tbb-plain", "tbb"};
    int mode = -1;
    for (int i = 0; argc > 1 && i < 6; ++i)
        if (std::strcmp(argv[1], modes[i]) == 0) mode = i;
    const int n = argc > 2 ? std::atoi(argv[2]) : 22;
    if (mode < 0) {
        std::fprintf(stderr, "usage: spawn_cost plain|async|deferred|group|tbb-plain|tbb [n]\n");
        return 2;
    }
    long r = -1;
    if (mode >= 4) {
#ifdef HAVE_TBB
        tbb::task_arena arena(1);
        arena.execute([&] { r = spawn_cost_measured(mode, n); });
#else
        std::fprintf(stderr, "spawn_cost: built without oneTBB\n");
        return 2;
#endif
    } else {
        // async() and TaskGroup run on the global pool: one worker.
        RcppSpool::ThreadPool::globalInstance().setNumThreads(1);
        r = RcppSpool::async([&] { return spawn_cost_measured(mode, n); }).get();
    }
    std::printf("%s fib(%d) = %ld\n", modes[mode], n, r);
    return 0;
}
#endif
