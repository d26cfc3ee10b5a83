// How many threads the scheduler wakes, with many workers (a machine far
// larger than ours): a workload runs on a pool of W workers, with serial gaps
// that let the workers fall asleep, and the program prints the threads woken
// (Scheduler::wakeUps(): signals to sleeping threads, for completions and for
// work). A completion should wake the one thread that waits for it, so the
// first figure should not grow with W.
//   Usage: bench_wakeups WORKERS [async|loops]
//   async  100 rounds of fib(12) with a task per call (RcppSpool::async +
//          get(): 232 tasks a round), 1 ms of serial work between rounds
//   loops  500 blocking parallelFor calls over 64 items on 2 threads, 1 ms of
//          serial work between them
#include <RcppSpool.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static long fib(int n)
{
    if (n < 2) return n;
    auto a = RcppSpool::async(fib, n - 1);
    long b = fib(n - 2);
    return a.get() + b;
}

static void spinFor(std::chrono::microseconds d)
{
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {}
}

static bool run(const char* what)
{
    if (std::strcmp(what, "async") == 0) {
        bool ok = true;
        for (int k = 0; k < 100; ++k) {
            ok = ok && fib(12) == 144;
            spinFor(std::chrono::microseconds(1000));
        }
        return ok;
    }
    long sum = 0;
    for (int k = 0; k < 500; ++k) {
        std::vector<long> v(64, 0);
        RcppSpool::parallelFor(0, 64, [&](std::ptrdiff_t i) { v[i] = i; }, 2);
        for (long x : v) sum += x;
        spinFor(std::chrono::microseconds(1000));
    }
    return sum == 500L * 2016;
}

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_wakeups WORKERS [async|loops]\n");
        return 2;
    }
    const std::size_t workers = std::strtoul(argv[1], nullptr, 10);
    auto& pool = RcppSpool::ThreadPool::globalInstance();
    pool.setNumThreads(workers);
    for (const char* what : {"async", "loops"}) {
        if (argc > 2 && std::strcmp(argv[2], what) != 0) continue;
        const auto before = pool.scheduler().wakeUps();
        if (!run(what)) {
            std::fprintf(stderr, "bench_wakeups: wrong result (%s)\n", what);
            return 1;
        }
        const auto after = pool.scheduler().wakeUps();
        const int n = what[0] == 'a' ? 100 : 500;
        std::printf("%-5s %3zu workers: threads woken for completions %.2f, for work %.2f per %s\n", what, workers,
                    double(after.forCompletion - before.forCompletion) / n,
                    double(after.forWork - before.forWork) / n, what[0] == 'a' ? "round" : "loop");
    }
    return 0;
}
