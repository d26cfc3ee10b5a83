// TaskGroup's kept task (issue 38, lazy task creation): where the pool would
// rather the caller ran a spawn (Scheduler::callerRuns(): a worker whose
// deque holds tasks for thieves, nobody hungry, a deeper frame than the last
// task it queued), a group with no task queued keeps the task and wait() (or
// the destructor) runs it as a plain call. Every promise of a group must hold
// for it as for a queued task: it runs once, its exception is rethrown, a
// cancel() or an interrupt before it drops it, a second task queues it.
// Meant for the TSan and ASan builds too (a callable run twice, destroyed
// twice or never, shows there).
#include <RcppSpool.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

//! Runs `inGroup(pool)` on the only worker of a pool, from a frame deeper
//! than the one that queued two tasks of another group: the conditions
//! under which a spawn is kept (the worker busy, so nobody is hungry; two
//! tasks on its deque for thieves).
struct OneWorker {
    RcppSpool::ThreadPool pool{1};

    template <class Body>
    void run(Body body)
    {
        std::atomic<bool> ran{false};
        pool.push([&] {
            RcppSpool::TaskGroup fill(pool);
            fill.run([] {});
            fill.run([] {});
            deeper(body);
            fill.wait();
            ran = true;
        });
        pool.wait();
        ASSERT_TRUE(ran.load());
    }

    template <class Body>
    [[gnu::noinline]] void deeper(Body& body)
    {
        body(pool);
    }

    std::size_t pushed() { return pool.scheduler().tasksPushed(); }
};

//! A callable not trivially copyable and larger than a task's record (kept
//! on the heap), counting its live copies through `alive`.
struct Counted {
    std::shared_ptr<int> alive;
    std::vector<int> data = std::vector<int>(16, 1);
    std::atomic<int>* runs;
    void operator()() const { runs->fetch_add(1); }
};

}  // namespace

TEST(TaskGroupKeep, KeepsItsOnlyTaskAndRunsItInWaitOnTheWaiter)
{
    OneWorker w;
    w.run([&](RcppSpool::ThreadPool&) {
        RcppSpool::TaskGroup g(w.pool);
        std::thread::id ranOn;
        const auto before = w.pushed();
        g.run([&] { ranOn = std::this_thread::get_id(); });
        EXPECT_EQ(w.pushed(), before);  // kept, not queued
        EXPECT_EQ(ranOn, std::thread::id());
        g.wait();
        EXPECT_EQ(ranOn, std::this_thread::get_id());
        EXPECT_FALSE(g.isCancelled());
        // Reusable: kept again.
        int x = 0;
        g.run([&] { x = 1; });
        EXPECT_EQ(w.pushed(), before);
        g.wait();
        EXPECT_EQ(x, 1);
    });
    EXPECT_EQ(w.pool.scheduler().tasksQueued(), 0u);
}

TEST(TaskGroupKeep, ASecondRunQueuesTheKeptTaskFirst)
{
    OneWorker w;
    w.run([&](RcppSpool::ThreadPool&) {
        RcppSpool::TaskGroup g(w.pool);
        std::atomic<int> a{0}, b{0};
        const auto before = w.pushed();
        g.run([&] { a++; });
        g.run([&] { b++; });
        EXPECT_EQ(w.pushed(), before + 2);  // both queued
        g.wait();
        EXPECT_EQ(a.load(), 1);
        EXPECT_EQ(b.load(), 1);
    });
}

TEST(TaskGroupKeep, ItsExceptionIsRethrownByWaitAndTheGroupStaysUsable)
{
    OneWorker w;
    w.run([&](RcppSpool::ThreadPool&) {
        RcppSpool::TaskGroup g(w.pool);
        g.run([] { throw std::runtime_error("kept error"); });
        try {
            g.wait();
            ADD_FAILURE() << "wait() returned";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "kept error");
        }
        EXPECT_FALSE(g.isCancelled());
        int x = 0;
        g.run([&] { x = 2; });
        g.wait();
        EXPECT_EQ(x, 2);
    });
}

// The kept task queues tasks of its own group (a run() while it runs queues),
// then throws: wait() cancels those not started, waits for the others, and
// rethrows the kept task's error; nothing of the group is left behind.
TEST(TaskGroupKeep, ItsTasksQueuedIntoTheGroupAreWaitedForOrCancelledWhenItThrows)
{
    OneWorker w;
    std::atomic<int> ran{0};
    w.run([&](RcppSpool::ThreadPool&) {
        RcppSpool::TaskGroup g(w.pool);
        const auto before = w.pushed();
        g.run([&] {
            for (int i = 0; i < 20; ++i) g.run([&] { ran++; });
            throw std::runtime_error("after queueing");
        });
        EXPECT_EQ(w.pushed(), before);
        EXPECT_THROW(g.wait(), std::runtime_error);
        EXPECT_EQ(w.pushed(), before + 20);
        EXPECT_LE(ran.load(), 20);
        EXPECT_FALSE(g.isCancelled());
        // And without an error, wait() waits for all of them.
        ran = 0;
        g.run([&] {
            for (int i = 0; i < 20; ++i) g.run([&] { ran++; });
        });
        g.wait();
        EXPECT_EQ(ran.load(), 20);
    });
    EXPECT_EQ(w.pool.scheduler().tasksQueued(), 0u);
    EXPECT_EQ(w.pool.scheduler().tasksRunning(), 0u);
}

TEST(TaskGroupKeep, CancelBeforeWaitDropsItAndFreesItsCallable)
{
    OneWorker w;
    w.run([&](RcppSpool::ThreadPool&) {
        auto alive = std::make_shared<int>(0);
        std::atomic<int> runs{0};
        RcppSpool::TaskGroup g(w.pool);
        const auto before = w.pushed();
        g.run(Counted{alive, {}, &runs});
        EXPECT_EQ(w.pushed(), before);
        EXPECT_GT(alive.use_count(), 1);
        g.cancel();
        EXPECT_TRUE(g.isCancelled());
        g.wait();
        EXPECT_EQ(runs.load(), 0);
        EXPECT_EQ(alive.use_count(), 1);
        EXPECT_FALSE(g.isCancelled());
        // A run() after cancel(): the kept task is queued into the cancelled
        // group (dropped there), the new one too.
        g.run(Counted{alive, {}, &runs});
        g.cancel();
        g.run(Counted{alive, {}, &runs});
        g.wait();
        EXPECT_EQ(runs.load(), 0);
        EXPECT_EQ(alive.use_count(), 1);
    });
}

TEST(TaskGroupKeep, ACallableOnTheHeapRunsOnceAndIsFreed)
{
    OneWorker w;
    w.run([&](RcppSpool::ThreadPool&) {
        auto alive = std::make_shared<int>(0);
        std::atomic<int> runs{0};
        {
            RcppSpool::TaskGroup g(w.pool);
            const auto before = w.pushed();
            g.run(Counted{alive, {}, &runs});
            EXPECT_EQ(w.pushed(), before);
            g.wait();
        }
        EXPECT_EQ(runs.load(), 1);
        EXPECT_EQ(alive.use_count(), 1);
    });
}

TEST(TaskGroupKeep, TheDestructorRunsItAndDropsItsError)
{
    OneWorker w;
    w.run([&](RcppSpool::ThreadPool&) {
        int x = 0;
        {
            RcppSpool::TaskGroup g(w.pool);
            g.run([&] { x = 3; });
        }
        EXPECT_EQ(x, 3);
        {
            RcppSpool::TaskGroup g(w.pool);
            g.run([] { throw std::runtime_error("dropped"); });
        }  // no exception escapes the destructor
    });
}

TEST(TaskGroupKeep, AnInterruptBeforeItRunsDropsIt)
{
    OneWorker w;
    w.run([&](RcppSpool::ThreadPool&) {
        auto alive = std::make_shared<int>(0);
        std::atomic<int> runs{0};
        RcppSpool::TaskGroup g(w.pool);
        g.run(Counted{alive, {}, &runs});
        RcppSpool::engine::interruptFlag().store(true);
        g.wait();
        RcppSpool::engine::interruptFlag().store(false);
        EXPECT_EQ(runs.load(), 0);
        EXPECT_EQ(alive.use_count(), 1);
    });
}

// Where every task runs on its caller (a pool without workers), run() runs
// the task at once, as before: nothing is kept for wait().
TEST(TaskGroupKeep, APoolWithoutWorkersRunsTheTaskInRun)
{
    RcppSpool::ThreadPool pool(0);
    RcppSpool::TaskGroup g(pool);
    int x = 0;
    g.run([&] { x = 4; });
    EXPECT_EQ(x, 4);
    g.wait();
}

// Outside the pool (the test's main thread) nothing is kept: the task is
// queued for the workers.
TEST(TaskGroupKeep, OffTheWorkersTheTaskIsQueued)
{
    RcppSpool::ThreadPool pool(1);
    RcppSpool::TaskGroup g(pool);
    const auto before = pool.scheduler().tasksPushed();
    std::atomic<int> x{0};
    g.run([&] { x = 5; });
    EXPECT_EQ(pool.scheduler().tasksPushed(), before + 1);
    g.wait();
    EXPECT_EQ(x.load(), 5);
}

// A recursion of groups, a task each (the kept shape), on several workers:
// kept and queued tasks mix, thieves take the queued ones.
static long groupFib(int n)
{
    if (n < 2) return n;
    long a = 0, b = 0;
    RcppSpool::TaskGroup g;
    g.run([&] { a = groupFib(n - 1); });
    b = groupFib(n - 2);
    g.wait();
    return a + b;
}

TEST(TaskGroupKeep, ARecursionWithATaskAGroupIsRightOnAnyNumberOfWorkers)
{
    auto& pool = RcppSpool::ThreadPool::globalInstance();
    for (std::size_t n : {1u, 2u, 4u}) {
        pool.setNumThreads(n);
        for (int rep = 0; rep < 5; ++rep) EXPECT_EQ(RcppSpool::async([] { return groupFib(22); }).get(), 17711);
        pool.wait();
        EXPECT_EQ(pool.scheduler().tasksQueued(), 0u);
    }
    pool.setNumThreads(2);
}
