// The hazards of a spawn's fast path (issue 38): a spawn that its owner takes
// back and runs inline must keep every promise a queued task keeps. One test
// per hazard: a task stolen between its push and its owner's pop, an
// exception from a task that ran inline, a deferred task that is never run,
// a future moved to another thread before get(), and spawns while a
// ThreadPool is destroyed. Meant for the TSan and ASan builds as much as the
// plain one (they see the races and leaks that a result cannot show).
#include <RcppSpool.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

//! Spins until `flag` is set or `limit` passed; true if it was set.
bool spinUntil(const std::atomic<bool>& flag, std::chrono::milliseconds limit = 5000ms)
{
    const auto until = Clock::now() + limit;
    while (!flag.load()) {
        if (Clock::now() > until) return false;
        std::this_thread::yield();
    }
    return true;
}

}  // namespace

// ---- a task stolen between its push and its owner's pop -------------------------

// The owner pushes, then (before it joins) the other worker steals the task:
// the owner's join finds its deque without the task and must wait for the
// thief, not run anything twice or return early.
TEST(FastPath, AFutureWhoseTaskWasStolenBeforeGetWaitsForTheThief)
{
    RcppSpool::ThreadPool pool(2);
    auto outer = pool.pushReturn([&] {
        const auto owner = std::this_thread::get_id();
        std::atomic<bool> started{false}, release{false};
        std::atomic<int> runs{0};
        auto f = pool.pushReturn([&] {
            started = true;
            runs++;
            spinUntil(release);  // still running on the thief when get() starts
            return std::this_thread::get_id();
        });
        const bool stolen = spinUntil(started);  // the other worker took it
        release = true;
        const auto ranOn = f.get();
        return std::make_tuple(stolen, ranOn != owner, runs.load());
    });
    const auto r = outer.get();
    EXPECT_TRUE(std::get<0>(r)) << "the idle worker never stole the task";
    EXPECT_TRUE(std::get<1>(r));
    EXPECT_EQ(std::get<2>(r), 1);
}

TEST(FastPath, AGroupWhoseTaskWasStolenBeforeWaitWaitsForTheThief)
{
    RcppSpool::ThreadPool pool(2);
    auto outer = pool.pushReturn([&] {
        std::atomic<bool> started{false}, release{false};
        std::atomic<int> runs{0};
        RcppSpool::TaskGroup g(pool);
        g.run([&] {
            started = true;
            spinUntil(release);
            runs++;
        });
        const bool stolen = spinUntil(started);
        release = true;
        g.wait();
        return std::make_pair(stolen, runs.load());
    });
    const auto r = outer.get();
    EXPECT_TRUE(r.first);
    EXPECT_EQ(r.second, 1);
}

// The race itself, many times: spawns joined at once while the other worker
// steals whatever it can. Every result arrives once, whoever ran it.
TEST(FastPath, SpawnsJoinedAtOnceWhileAThiefStealsEachRunOnce)
{
    RcppSpool::ThreadPool pool(2);
    const int n = 20000;
    auto outer = pool.pushReturn([&] {
        std::vector<std::atomic<int>> runs(n);
        long sum = 0;
        for (int i = 0; i < n; ++i) {
            auto f = pool.pushReturn([&runs, i] {
                runs[i]++;
                return static_cast<long>(i);
            });
            if (i % 2) {
                RcppSpool::TaskGroup g(pool);
                g.run([&runs, i] { runs[i]++; });
                g.wait();
                runs[i]--;  // counted twice: once by the future's task, once by the group's
            }
            sum += f.get();
        }
        int wrong = 0;
        for (auto& r : runs) wrong += r.load() != 1;
        return std::make_pair(sum, wrong);
    });
    const auto r = outer.get();
    EXPECT_EQ(r.first, static_cast<long>(n) * (n - 1) / 2);
    EXPECT_EQ(r.second, 0);
}

// ---- a task its owner took back --------------------------------------------------

namespace {
//! fib(n) with a pushReturn() per call on `pool`, joined at once.
long fibTasks(RcppSpool::ThreadPool& pool, int n)
{
    if (n < 2) return n;
    auto x = pool.pushReturn([&pool, n] { return fibTasks(pool, n - 1); });
    const long y = fibTasks(pool, n - 2);
    return x.get() + y;
}
}  // namespace

// A worker's get() takes its own task back and runs it as a plain call,
// counted once (not as started and finished): the pool's counts must still
// say that nothing is queued or running once the tasks are done, also while
// the task that spawned them still runs.
TEST(FastPath, TasksTakenBackByTheirGetterLeaveNoCountBehind)
{
    RcppSpool::ThreadPool pool(1);  // one worker: every spawn is taken back (nobody steals)
    const std::size_t pushedBefore = pool.scheduler().tasksPushed();
    auto outer = pool.pushReturn([&] {
        const long r = fibTasks(pool, 15);
        return std::make_tuple(r, pool.getTasksQueued(), pool.getTasksRunning());
    });
    const auto r = outer.get();
    EXPECT_EQ(std::get<0>(r), 610);
    EXPECT_EQ(std::get<1>(r), 0u) << "tasks taken back still counted as queued";
    EXPECT_EQ(std::get<2>(r), 1u) << "only the outer task runs";
    pool.wait();
    EXPECT_GE(pool.scheduler().tasksPushed() - pushedBefore, 987u);  // 1 + the 986 spawns
    EXPECT_EQ(pool.getTasksQueued(), 0u);
    EXPECT_EQ(pool.getTasksRunning(), 0u);
}

// A task taken back runs in its getter's frame: what it pushes counts in the
// getter's work, so the pool's wait() still waits for it (never for nobody,
// as RcppThread's nested loops were).
TEST(FastPath, WorkPushedByATaskTakenBackIsWaitedFor)
{
    RcppSpool::ThreadPool pool(1);
    std::atomic<bool> done{false};
    auto outer = pool.pushReturn([&] {
        auto f = pool.pushReturn([&] {
            pool.push([&] {
                std::this_thread::sleep_for(30ms);
                done = true;
            });
            return 1;
        });
        return f.get();
    });
    EXPECT_EQ(outer.get(), 1);
    pool.wait();
    EXPECT_TRUE(done.load());
}

namespace {
//! A result whose move may throw (a std::string and a move that is not
//! noexcept): get() of a task taken back keeps it through a guard.
struct MayThrowOnMove {
    std::string text;
    MayThrowOnMove() = default;
    explicit MayThrowOnMove(std::string t) : text(std::move(t)) {}
    MayThrowOnMove(const MayThrowOnMove&) = default;
    MayThrowOnMove(MayThrowOnMove&& other) noexcept(false) : text(std::move(other.text)) {}
};
}  // namespace

// Every kind of result of a task its owner takes back: a value, a value
// whose move may throw, a move-only value, a reference, void, and an
// exception after each (the state is freed once, ASan checks, whichever
// path get() takes).
TEST(FastPath, TasksTakenBackGiveEveryKindOfResult)
{
    static_assert(!std::is_nothrow_move_constructible<MayThrowOnMove>::value, "the guarded path");
    RcppSpool::ThreadPool pool(1);  // one worker: its own spawns are taken back
    int target = 5;
    auto outer = pool.pushReturn([&] {
        int checks = 0;
        for (int round = 0; round < 100; ++round) {
            checks += pool.pushReturn([] { return 42L; }).get() == 42L;
            checks += pool.pushReturn([] { return MayThrowOnMove(std::string(40, 'm')); }).get().text.size() == 40;
            checks += *pool.pushReturn([] { return std::make_unique<int>(3); }).get() == 3;
            int& r = pool.pushReturn([&target]() -> int& { return target; }).get();
            checks += &r == &target;
            pool.pushReturn([&target] { ++target; }).get();
            try {
                pool.pushReturn([]() -> MayThrowOnMove { throw std::length_error("guarded"); }).get();
            } catch (const std::length_error&) {
                ++checks;
            }
            try {
                pool.pushReturn([]() -> long { throw std::out_of_range("plain"); }).get();
            } catch (const std::out_of_range&) {
                ++checks;
            }
        }
        return checks;
    });
    EXPECT_EQ(outer.get(), 600);
    EXPECT_EQ(target, 105);
}

// ---- an exception from a task that ran inline ----------------------------------

TEST(FastPath, AnExceptionOfATaskRunInlineByItsOwnerReachesItsJoinOnce)
{
    RcppSpool::ThreadPool pool(1);  // one worker: its own spawns run inline in its joins
    auto outer = pool.pushReturn([&] {
        int caught = 0;
        auto f = pool.pushReturn([]() -> int { throw std::length_error("future"); });
        try {
            f.get();
        } catch (const std::length_error& e) {
            caught += std::string(e.what()) == "future";
        }
        auto d = RcppSpool::async(std::launch::async | std::launch::deferred,
                                  []() -> int { throw std::out_of_range("deferred"); });
        try {
            d.get();
        } catch (const std::out_of_range&) {
            caught++;
        }
        RcppSpool::TaskGroup g(pool);
        g.run([] { throw std::domain_error("group"); });
        try {
            g.wait();
        } catch (const std::domain_error&) {
            caught++;
        }
        // Rethrown once: the pool and the group are clean afterwards.
        g.run([] {});
        g.wait();
        auto ok = pool.pushReturn([] { return 7; });
        return std::make_pair(caught, ok.get());
    });
    const auto r = outer.get();
    EXPECT_EQ(r.first, 3);
    EXPECT_EQ(r.second, 7);
    EXPECT_NO_THROW(pool.wait());
}

TEST(FastPath, AnExceptionOfATaskRunInlineOnAPoolWithoutWorkersReachesGet)
{
    RcppSpool::ThreadPool pool(0);
    auto f = pool.pushReturn([]() -> int { throw std::runtime_error("inline"); });
    EXPECT_THROW(f.get(), std::runtime_error);
    RcppSpool::TaskGroup g(pool);
    g.run([] { throw std::runtime_error("inline group"); });
    EXPECT_THROW(g.wait(), std::runtime_error);
    EXPECT_NO_THROW(pool.wait());
}

// ---- a deferred task that is never run -------------------------------------------

// std::launch::deferred: nobody asked, so it never runs, and what it holds is
// freed (the shared_ptr's count says so; ASan would see a leak). The
// library's own choice (async | deferred) and std::launch::async keep their
// promise: the task runs once even if nobody calls get().
TEST(FastPath, DeferredWorkNobodyAsksForIsFreedUnrunAndChosenWorkStillRuns)
{
    RcppSpool::ThreadPool::globalInstance().setNumThreads(2);
    auto held = std::make_shared<int>(1);
    std::atomic<int> userDeferred{0}, chosen{0}, queued{0};
    auto outer = RcppSpool::async([&] {
        for (int i = 0; i < 1000; ++i) {
            {
                auto d = RcppSpool::async(std::launch::deferred, [held, &userDeferred] { userDeferred++; });
                auto c = RcppSpool::async(std::launch::async | std::launch::deferred, [held, &chosen] { chosen++; });
                auto q = RcppSpool::async(std::launch::async, [held, &queued] { queued++; });
            }
        }
    });
    outer.get();
    EXPECT_EQ(userDeferred.load(), 0);
    EXPECT_EQ(chosen.load(), 1000);
    EXPECT_EQ(queued.load(), 1000);
    // A task's callable is freed just after its result is published: allow
    // the worker a moment.
    const auto until = Clock::now() + 5s;
    while (held.use_count() != 1 && Clock::now() < until) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(held.use_count(), 1) << "a dropped task's callable was not freed";
}

// ---- a future moved to another thread before get() -------------------------------

// The task is still queued on its owner's deque when its future moves to a
// thread outside the pool (and to another worker): their get() must wait
// for it (or take it), never run it twice, and the owner must not wait on
// a future it gave away.
TEST(FastPath, AFutureMovedToAnotherThreadBeforeGetGetsItsResult)
{
    RcppSpool::ThreadPool pool(2);
    for (int round = 0; round < 200; ++round) {
        std::promise<RcppSpool::Future<int>> handOver;
        auto received = handOver.get_future();
        std::atomic<int> runs{0};
        pool.push([&] { handOver.set_value(pool.pushReturn([&] { return ++runs; })); });
        std::thread outside([&] {
            RcppSpool::Future<int> f = received.get();
            EXPECT_EQ(f.get(), 1);
        });
        outside.join();
        pool.wait();
        EXPECT_EQ(runs.load(), 1);
    }
    // To another worker, and as a std::future.
    auto outer = pool.pushReturn([&] {
        std::atomic<int> runs{0};
        auto f = std::make_shared<RcppSpool::Future<int>>(pool.pushReturn([&] { return ++runs; }));
        auto g = pool.pushReturn([f] { return f->get(); });  // may run on either worker
        std::future<int> s = pool.pushReturn([&] { return 10 + ++runs; });
        auto h = pool.pushReturn([&s] { return s.get(); });
        const int a = g.get(), b = h.get();
        return std::make_tuple(a + b, runs.load());
    });
    const auto r = outer.get();
    EXPECT_EQ(std::get<0>(r), 1 + 12);
    EXPECT_EQ(std::get<1>(r), 2);
}

TEST(FastPath, ADeferredCallMovedToAnotherThreadRunsThere)
{
    auto f = RcppSpool::async(std::launch::async | std::launch::deferred,
                              [] { return std::this_thread::get_id(); });
    std::thread::id ranOn;
    std::thread other([&] { ranOn = f.get(); });
    other.join();
    // Deferred by the library: it ran where get() was called; queued: on a worker.
    EXPECT_NE(ranOn, std::this_thread::get_id());
    EXPECT_FALSE(f.valid());
}

// ---- spawns while a ThreadPool is destroyed ----------------------------------------

// Tasks that keep spawning (futures, groups, pushes) while the pool's
// destructor runs: it returns, nothing runs afterwards, futures of dropped
// tasks report a cancellation, and nothing leaks (ASan).
TEST(FastPath, SpawnsDuringThreadPoolDestructionNeitherHangNorRunLate)
{
    for (int round = 0; round < 20; ++round) {
        auto pool = std::make_unique<RcppSpool::ThreadPool>(2);
        RcppSpool::ThreadPool* p = pool.get();
        std::atomic<long> ran{0};
        std::atomic<bool> started{false};
        for (int k = 0; k < 4; ++k)
            p->push([p, &ran, &started] {
                started = true;
                const auto until = Clock::now() + 20ms;
                while (Clock::now() < until) {
                    auto f = p->pushReturn([&ran] { return ++ran; });
                    RcppSpool::TaskGroup g(*p);
                    g.run([&ran] { ran++; });
                    p->push([&ran] { ran++; });
                    try {
                        f.get();
                    } catch (const std::runtime_error&) {
                        // dropped by the destructor: reported as cancelled
                    }
                    try {
                        g.wait();
                    } catch (const std::runtime_error&) {
                    }
                }
            });
        ASSERT_TRUE(spinUntil(started));
        const auto t0 = Clock::now();
        pool.reset();
        EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);
        const long after = ran.load();
        std::this_thread::sleep_for(2ms);
        EXPECT_EQ(ran.load(), after) << "a task ran after the destructor returned";
    }
}
