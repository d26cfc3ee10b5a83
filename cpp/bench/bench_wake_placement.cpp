// Where a woken thread runs (engine/wake_steering.h), with the steering on
// and off in one run, in turns.
//
//   bench_wake_placement [--rounds N=100] [--gap-ms G=5]
//
// 1. Wake-ups: a thread sleeps G ms in a SleepList (as the scheduler's
//    workers do), then a busy thread wakes it and goes on computing: the
//    time until the sleeper runs. Also for a sleeper that spun 50 us
//    calling sched_yield() before it slept (the workers' search yields:
//    under EEVDF a yielding thread is placed late when woken).
// 2. A loop's invited worker: parallelFor on 2 threads over the rows of a
//    2000 x 1000 column-major matrix (a 2-3 ms loop, bench_shapes's "rows"),
//    G ms apart: the loop's time, and when a thread other than the caller
//    ran its first row (after 500 us or never: "late").
// Medians of N. On a machine whose kernel puts a woken thread beside its
// busy waker (2 vCPUs, Linux 6.18: most wake-ups), steering off shows
// late wake-ups and loops near serial time; elsewhere the two agree.
#include <RcppSpool.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;
using RcppSpool::engine::Sleeper;
using RcppSpool::engine::SleepList;
using RcppSpool::engine::SleepNode;
using RcppSpool::engine::Waker;

namespace {

double median(std::vector<double> v)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
double quantile(std::vector<double> v, double q)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}
long countAbove(const std::vector<double>& v, double x)
{
    return static_cast<long>(std::count_if(v.begin(), v.end(), [x](double y) { return y > x; }));
}
double usSince(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

void setSteering(bool on) { RcppSpool::engine::wakeSteeringEnabled() = on; }

//! One sleeper thread that sleeps on request and reports when it woke.
class Sleepy {
public:
    explicit Sleepy(bool yieldsFirst) : yields_(yieldsFirst), t_([this] { loop(); }) {}
    ~Sleepy()
    {
        stop_ = true;
        while (!done_) {
            list_.wakeOne();
            std::this_thread::yield();
        }
        t_.join();
    }
    //! Waits until it sleeps, then wakes it from this (busy) thread and
    //! computes until it runs: microseconds from the wake-up.
    double wakeFromBusyThread()
    {
        while (list_.sleepers() == 0) std::this_thread::yield();
        std::this_thread::sleep_for(gap);
        woke_ = -1;
        t0_ = Clock::now();
        list_.wakeOne(Waker::staysBusy);
        volatile double x = 0;
        while (woke_.load(std::memory_order_acquire) < 0)
            for (int i = 0; i < 64; ++i) x = x + i;
        return woke_.load();
    }
    static std::chrono::milliseconds gap;

private:
    void loop()
    {
        while (!stop_) {
            if (yields_) {
                const auto end = Clock::now() + std::chrono::microseconds(50);
                while (Clock::now() < end) std::this_thread::yield();
            }
            {
                Sleeper me;
                SleepNode node{&me};
                list_.enlist(node, [] { return false; });
                me.sleep(std::chrono::nanoseconds::max());
                if (!stop_) woke_.store(usSince(t0_), std::memory_order_release);
                list_.delist(node);
            }
        }
        done_ = true;
    }
    bool yields_;
    SleepList list_;
    std::atomic<bool> stop_{false}, done_{false};
    std::atomic<double> woke_{0};
    Clock::time_point t0_;
    std::thread t_;
};
std::chrono::milliseconds Sleepy::gap{5};

void wakeUps(int rounds)
{
    std::printf("1. a sleeper woken by a busy thread, %d wake-ups each, %lld ms asleep: time until it runs (us)\n",
                rounds, static_cast<long long>(Sleepy::gap.count()));
    std::printf("   %-34s %9s %9s %9s %7s\n", "sleeper, steering", "median", "90%", "max", ">500us");
    for (bool yields : {false, true}) {
        std::vector<double> on, off;
        {
            Sleepy s(yields);
            for (int r = 0; r < 2 * rounds; ++r) {
                setSteering(r % 2 == 0);
                (r % 2 == 0 ? on : off).push_back(s.wakeFromBusyThread());
            }
        }
        setSteering(true);
        for (bool steer : {true, false}) {
            const auto& v = steer ? on : off;
            char what[64];
            std::snprintf(what, sizeof what, "%s, %s", yields ? "yielded 50 us first" : "slept at once", steer ? "on" : "off");
            std::printf("   %-34s %9.0f %9.0f %9.0f %7ld\n", what, median(v), quantile(v, 0.9), quantile(v, 1.0),
                        countAbove(v, 500));
        }
    }
}

struct RowLoop {
    static constexpr std::size_t n = 2000, cols = 1000;
    std::vector<double> x = std::vector<double>(n * cols), out = std::vector<double>(n);
    RowLoop()
    {
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 97) / 97.0;
    }
    void row(std::size_t i)
    {
        double s = 0;
        for (std::size_t j = 0; j < cols; ++j) s += x[i + j * n] * x[i + j * n];
        out[i] = s;
    }
    //! One loop on 2 threads: its time, and when another thread than the
    //! caller ran its first row (-1: never), in microseconds.
    std::pair<double, double> parallel()
    {
        const std::thread::id caller = std::this_thread::get_id();
        std::atomic<double> first{-1};
        const auto t0 = Clock::now();
        RcppSpool::parallelFor(
            0, static_cast<std::ptrdiff_t>(n),
            [&](std::ptrdiff_t i) {
                row(static_cast<std::size_t>(i));
                if (first.load(std::memory_order_relaxed) < 0 && std::this_thread::get_id() != caller) {
                    double expected = -1;
                    first.compare_exchange_strong(expected, usSince(t0));
                }
            },
            2);
        return {usSince(t0), first.load()};
    }
    double serial()
    {
        const auto t0 = Clock::now();
        for (std::size_t i = 0; i < n; ++i) row(i);
        return usSince(t0);
    }
};

void invitedWorker(int rounds)
{
    RowLoop loop;
    std::vector<double> time[2], first[2], serial;
    loop.parallel();  // the pool's start
    for (int r = 0; r < rounds; ++r)
        for (int k = 0; k < 2; ++k) {
            const bool steer = (r + k) % 2 == 0;
            setSteering(steer);
            std::this_thread::sleep_for(Sleepy::gap);
            const auto tf = loop.parallel();
            time[steer].push_back(tf.first);
            first[steer].push_back(tf.second < 0 ? 1e9 : tf.second);
        }
    setSteering(true);
    for (int r = 0; r < rounds / 4 + 1; ++r) serial.push_back(loop.serial());
    std::printf("\n2. parallelFor on 2 threads over 2000 rows of a column-major matrix, %d loops each, %lld ms apart\n",
                rounds, static_cast<long long>(Sleepy::gap.count()));
    std::printf("   serial: %.0f us (median)\n", median(serial));
    std::printf("   %-10s %10s %10s %10s %9s %16s\n", "steering", "loop us", "q1", "q3", "speedup", "worker late");
    for (int steer : {1, 0}) {
        std::printf("   %-10s %10.0f %10.0f %10.0f %9.2f %9ld of %d\n", steer ? "on" : "off", median(time[steer]),
                    quantile(time[steer], 0.25), quantile(time[steer], 0.75), median(serial) / median(time[steer]),
                    countAbove(first[steer], 500), rounds);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    int rounds = 100;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = std::max(2, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--gap-ms") && i + 1 < argc)
            Sleepy::gap = std::chrono::milliseconds(std::max(0, std::atoi(argv[++i])));
        else {
            std::fprintf(stderr, "usage: bench_wake_placement [--rounds N] [--gap-ms G]\n");
            return 2;
        }
    }
#ifndef RCPPSPOOL_WAKE_STEERING
    std::printf("bench_wake_placement: no wake-up steering on this platform (Linux only); both columns are the kernel's choice\n");
#endif
    std::printf("bench_wake_placement: %u hardware threads\n\n", std::thread::hardware_concurrency());
    wakeUps(rounds);
    invitedWorker(rounds);
    return 0;
}
