// Wake-ups steered off a busy waker's core (engine/wake_steering.h): the
// sleeper's CPU set is narrowed for its wake-up and put back afterwards,
// only when its waker goes on running, and never below one CPU. Where the
// kernel offers no such control (not Linux) the tests are skipped.
#include <RcppSpool.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#ifdef RCPPSPOOL_WAKE_STEERING
#include <sched.h>

using RcppSpool::engine::Sleeper;
using RcppSpool::engine::SleepList;
using RcppSpool::engine::SleepNode;
using RcppSpool::engine::Waker;

namespace {

cpu_set_t maskOfThisThread()
{
    cpu_set_t m;
    CPU_ZERO(&m);
    EXPECT_EQ(sched_getaffinity(0, sizeof m, &m), 0);
    return m;
}

bool sameMask(const cpu_set_t& a, const cpu_set_t& b) { return CPU_EQUAL(&a, &b) != 0; }

int firstCpuIn(const cpu_set_t& m)
{
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &m)) return c;
    return -1;
}

//! Pins the calling thread to one CPU for its lifetime, then puts its CPU
//! set back.
class PinnedHere {
public:
    explicit PinnedHere(int cpu) : saved_(maskOfThisThread())
    {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        EXPECT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    }
    ~PinnedHere() { sched_setaffinity(0, sizeof saved_, &saved_); }

private:
    cpu_set_t saved_;
};

//! What a sleeper saw while it was awake inside its sleep (its waker's
//! steering still in force) and after it left (steering undone).
struct Seen {
    bool steered = false;
    int cpu = -1;
    cpu_set_t during, after;
};

//! A thread that sleeps once in `list` (listed under the list's lock, as
//! the scheduler's sleepers are) and records what it saw.
std::thread sleepOnce(SleepList& list, Seen& seen, std::atomic<bool>& listed)
{
    return std::thread([&] {
        {
            Sleeper me;
            SleepNode node{&me};
            list.enlist(node, [] { return false; });
            listed = true;
            me.sleep(std::chrono::nanoseconds::max());
            seen.steered = me.steered();
            seen.cpu = sched_getcpu();
            seen.during = maskOfThisThread();
            list.delist(node);
        }
        seen.after = maskOfThisThread();
    });
}

void waitListed(const std::atomic<bool>& listed, const SleepList& list)
{
    while (!listed || list.sleepers() == 0) std::this_thread::yield();
}

//! One sleeper woken by this thread with `from`: the waker pinned to
//! `wakerCpu` (-1: not pinned); the sleeper starts before the pin, with our
//! CPU set, unless `sleeperPinnedToo` (then it inherits the one CPU).
Seen wakeOnce(Waker from, int wakerCpu, bool sleeperPinnedToo = false)
{
    SleepList list;
    Seen seen;
    std::atomic<bool> listed{false};
    std::unique_ptr<PinnedHere> pin;
    if (sleeperPinnedToo) pin.reset(new PinnedHere(wakerCpu));
    std::thread t = sleepOnce(list, seen, listed);
    if (!pin && wakerCpu >= 0) pin.reset(new PinnedHere(wakerCpu));
    waitListed(listed, list);
    EXPECT_TRUE(list.wakeOne(from));
    t.join();
    return seen;
}

}  // namespace

TEST(WakeSteering, ASleeperWokenByABusyThreadIsKeptOffItsCoreThenGetsItsCpuSetBack)
{
    const cpu_set_t mine = maskOfThisThread();
    if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "this process may use one CPU only";
    const int here = firstCpuIn(mine);
    const Seen seen = wakeOnce(Waker::staysBusy, here);
    cpu_set_t expected = mine;
    CPU_CLR(here, &expected);
    EXPECT_TRUE(seen.steered);
    EXPECT_NE(seen.cpu, here);
    EXPECT_TRUE(sameMask(seen.during, expected)) << "narrowed to every CPU but the waker's";
    EXPECT_TRUE(sameMask(seen.after, mine)) << "its own CPU set back once it left the list";
}

TEST(WakeSteering, AWakerThatLeavesChangesNothing)
{
    const cpu_set_t mine = maskOfThisThread();
    if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "this process may use one CPU only";
    const Seen seen = wakeOnce(Waker::leaves, -1);
    EXPECT_FALSE(seen.steered);
    EXPECT_TRUE(sameMask(seen.during, mine));
    EXPECT_TRUE(sameMask(seen.after, mine));
}

TEST(WakeSteering, ASleeperThatMayRunOnOneCpuOnlyKeepsIt)
{
    const int here = firstCpuIn(maskOfThisThread());
    const Seen seen = wakeOnce(Waker::staysBusy, here, /*sleeperPinnedToo=*/true);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(here, &one);
    EXPECT_FALSE(seen.steered);
    EXPECT_EQ(seen.cpu, here);
    EXPECT_TRUE(sameMask(seen.after, one));
}

TEST(WakeSteering, OffWhenSwitchedOff)
{
    const cpu_set_t mine = maskOfThisThread();
    if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "this process may use one CPU only";
    struct Restore {
        ~Restore() { RcppSpool::engine::wakeSteeringEnabled() = true; }
    } restore;
    RcppSpool::engine::wakeSteeringEnabled() = false;
    const Seen seen = wakeOnce(Waker::staysBusy, firstCpuIn(mine));
    EXPECT_FALSE(seen.steered);
    EXPECT_TRUE(sameMask(seen.during, mine));
}

// The scheduler's own wake-up: a thread from outside submits a task while
// the pool's only worker sleeps, and keeps its core busy; the worker runs the
// task elsewhere, and its CPU set is whole again for its next task. The
// worker last ran on that same core before it slept (Linux's favourite
// place for it then, on the machines where steering was found needed).
TEST(WakeSteering, AWorkerWokenForATaskRunsItOffTheSubmittersCore)
{
    const cpu_set_t mine = maskOfThisThread();
    if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "this process may use one CPU only";
    RcppSpool::ThreadPool pool(1);  // its worker inherits our CPU set
    auto& s = pool.scheduler();
    const int here = firstCpuIn(mine);
    for (int round = 0; round < 5; ++round) {
        pool.push([&] {
            PinnedHere moved(here);  // the worker runs on `here`, then may run anywhere again
        });
        pool.wait();
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (s.workersAsleep() == 0 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ASSERT_EQ(s.workersAsleep(), 1) << "the worker never went to sleep";
        std::atomic<int> ranOn{-2};
        {
            PinnedHere pin(here);
            pool.push([&] { ranOn = sched_getcpu(); });
            while (ranOn == -2) {}  // this core stays busy
        }
        EXPECT_NE(ranOn.load(), here) << "round " << round;
        pool.wait();
        cpu_set_t workerMask;
        CPU_ZERO(&workerMask);
        pool.push([&] { workerMask = maskOfThisThread(); });
        pool.wait();
        EXPECT_TRUE(sameMask(workerMask, mine)) << "round " << round;
    }
}

#else

TEST(WakeSteering, NotOnThisPlatform) { GTEST_SKIP() << "no wake-up steering here (Linux only)"; }

#endif
