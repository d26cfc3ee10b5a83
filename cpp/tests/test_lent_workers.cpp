// A scheduler that borrows its workers from another (engine/thread_lender.h):
// how a package built against another ABI version of the headers runs on the
// RcppSpool package's workers.
#include <RcppSpool.h>
#include <RcppSpool/engine/lending.h>

#include <gtest/gtest.h>

#include "service_thread.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
namespace engine = RcppSpool::engine;

namespace lent {

//! Runs `f` as a task of `s` counted in `c`.
template <class F>
void submit(engine::Scheduler& s, engine::Context& c, F f)
{
    c.add(1);
    s.submit(engine::Task::make(std::move(f), &c));
}
//! Waits (and helps, where the thread may) until everything counted in `c` is done.
void waitFor(engine::Scheduler& s, engine::Context& c)
{
    s.waitUntil(&c, [&] { return c.done(); });
}

//! The ids of the `n` worker threads of `s`, each made to run one task at once.
std::set<std::thread::id> workerIds(engine::Scheduler& s, std::size_t n)
{
    std::mutex m;
    std::condition_variable cv;
    std::set<std::thread::id> ids;
    engine::Context c;
    for (std::size_t i = 0; i < n; ++i)
        submit(s, c, [&] {
            std::unique_lock<std::mutex> lk(m);
            ids.insert(std::this_thread::get_id());
            cv.notify_all();
            cv.wait_for(lk, 10s, [&] { return ids.size() == n; });
        });
    waitFor(s, c);
    return ids;
}

//! A loop body of 300 us that counts how many threads run it at once.
struct CountedBody {
    std::atomic<int> active{0}, maxActive{0};
    std::atomic<long> total{0};  //!< the sum of the iterations run
    void operator()(std::ptrdiff_t i)
    {
        const int now = ++active;
        int m = maxActive.load();
        while (now > m && !maxActive.compare_exchange_weak(m, now)) {}
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        total += i;
        --active;
    }
};

//! Waits until the borrower has given back every thread (sessions leave
//! about 50 us after they find no work).
bool settles(engine::Scheduler& b)
{
    for (auto end = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < end;) {
        if (b.lentSlotsInUse() == 0) return true;
        std::this_thread::sleep_for(1ms);
    }
    return false;
}

}  // namespace lent

TEST(LentWorkers, ABorrowerStartsNoThreadAndRunsOnTheLendersWorkers)
{
    engine::Scheduler a(2);
    engine::SchedulerLender lender(a);
    const auto lenderThreads = lent::workerIds(a, 2);
    ASSERT_EQ(lenderThreads.size(), 2u);

    engine::Scheduler b(2, lender.table());
    EXPECT_TRUE(b.borrowsThreads());
    EXPECT_EQ(b.numWorkers(), 2u);
    // Tasks pushed from a thread that does not wait in b: only sessions run them.
    std::mutex m;
    std::set<std::thread::id> ran;
    std::atomic<int> count{0};
    engine::Context c;
    std::thread pusher([&] {
        for (int i = 0; i < 2000; ++i)
            lent::submit(b, c, [&, i] {
                std::this_thread::sleep_for(std::chrono::microseconds(i % 50 == 0 ? 200 : 0));
                std::lock_guard<std::mutex> lk(m);
                ran.insert(std::this_thread::get_id());
                ++count;
            });
    });
    pusher.join();
    for (auto end = std::chrono::steady_clock::now() + 20s; !c.done() && std::chrono::steady_clock::now() < end;)
        std::this_thread::sleep_for(1ms);
    ASSERT_TRUE(c.done());
    EXPECT_EQ(count.load(), 2000);
    for (const auto& id : ran) EXPECT_EQ(lenderThreads.count(id), 1u) << "a task of b ran on a thread that is no worker of a";
    EXPECT_TRUE(lent::settles(b));
    // Every slot vacant again, and counted as a hungry worker (a spawn is queued for a thread that may come).
    EXPECT_EQ(b.hungryWorkers(), 2);
}

TEST(LentWorkers, LenderThreadsThatWaitForTheBorrowerHelpItInsteadOfDeadlocking)
{
    // Both workers of a wait in b: no thread of a is free to run a session,
    // so b's work gets done only because waiting threads help.
    engine::Scheduler a(2);
    engine::SchedulerLender lender(a);
    engine::Scheduler b(2, lender.table());
    for (int round = 0; round < 50; ++round) {
        std::atomic<long> sum{0};
        std::atomic<int> waiting{0};
        engine::Context outer;
        for (int k = 0; k < 2; ++k)
            lent::submit(a, outer, [&] {
                ++waiting;
                while (waiting.load() < 2) std::this_thread::yield();  // both workers of a are here
                engine::Context inner;
                for (int i = 0; i < 100; ++i) lent::submit(b, inner, [&sum, i] { sum += i; });
                lent::waitFor(b, inner);
            });
        lent::waitFor(a, outer);
        ASSERT_EQ(sum.load(), 2 * 4950) << "round " << round;
    }
    EXPECT_TRUE(lent::settles(b));
}

TEST(LentWorkers, ALendersLoopCallingABorrowersLoopRunsNoMoreBodiesThanTheLenderHasThreads)
{
    engine::Scheduler a(2);
    engine::SchedulerLender lender(a);
    engine::Scheduler b(2, lender.table());
    lent::CountedBody inner;
    auto outerBody = [&](std::ptrdiff_t) { engine::blockingFor(b, 0, 20, inner, 64, 0); };
    engine::blockingFor(a, 0, 16, outerBody, 64, 0);
    EXPECT_EQ(inner.total.load(), 16 * 190);
    // a's loop runs on the caller and a's workers, one of which stands aside
    // for it: 2 threads. b borrows no more.
    EXPECT_LE(inner.maxActive.load(), 2);
    EXPECT_GE(inner.maxActive.load(), 1);
    EXPECT_TRUE(lent::settles(b));
}

TEST(LentWorkers, ABorrowersLoopCallingALendersLoopRunsNoMoreBodiesThanTheLenderHasThreads)
{
    // The other way round: b's loop (on the caller and a session lent by one
    // of a's workers) calls a's loop in each body. The caller and the lent
    // worker's body both join a's loop, and a worker of a stands aside for
    // each outside thread (one at most: one of its two workers computes
    // anyway). That used to be the last worker by index: when the session
    // went to worker 1, the one standing aside was the one busy in b's body,
    // and worker 0 computed on: three threads on a's two workers
    // (test-runtime.R caught it now and then). So the session is put on
    // worker 1 here: worker 0 is held in a task until the session starts.
    engine::Scheduler a(2);
    engine::SchedulerLender lender(a);
    engine::Scheduler b(2, lender.table());
    const auto mainThread = std::this_thread::get_id();
    for (int round = 0; round < 5; ++round) {
        std::atomic<bool> holding{false}, sessionStarted{false};
        engine::Context held;
        // Two tasks: the one on worker 1 waits until the other is held on
        // worker 0 (the only worker left to take it), then returns.
        for (int k = 0; k < 2; ++k)
            lent::submit(a, held, [&] {
                const auto deadline = std::chrono::steady_clock::now() + 5s;
                auto until = [&](std::atomic<bool>& flag) {
                    while (!flag.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
                };
                if (engine::Scheduler::currentWorkerIndex() != 0) return until(holding);
                holding = true;
                until(sessionStarted);
            });
        for (auto deadline = std::chrono::steady_clock::now() + 5s;
             !holding.load() && std::chrono::steady_clock::now() < deadline;)
            std::this_thread::yield();
        ASSERT_TRUE(holding.load()) << "round " << round;

        lent::CountedBody inner;
        auto outerBody = [&](std::ptrdiff_t) {
            if (std::this_thread::get_id() != mainThread) sessionStarted = true;
            engine::blockingFor(a, 0, 20, inner, 64, 0);
        };
        engine::blockingFor(b, 0, 8, outerBody, 64, 0);
        sessionStarted = true;  // (if b's loop ran on the caller alone)
        lent::waitFor(a, held);
        ASSERT_EQ(inner.total.load(), 8 * 190) << "round " << round;
        ASSERT_LE(inner.maxActive.load(), 2) << "round " << round;
        ASSERT_GE(inner.maxActive.load(), 1) << "round " << round;
    }
    EXPECT_TRUE(lent::settles(b));
}

TEST(LentWorkers, RecursiveTasksAndLoopsOfTheBorrowerAreRightUnderLoad)
{
    engine::Scheduler a(3);
    engine::SchedulerLender lender(a);
    engine::Scheduler b(3, lender.table());
    // Work of both pools at once, from both pools' tasks and from outside.
    const auto end = std::chrono::steady_clock::now() + 1s;
    std::atomic<long> done{0};
    std::vector<std::thread> outside;
    for (int t = 0; t < 2; ++t)
        outside.emplace_back([&, t] {
            engine::Scheduler& first = t == 0 ? a : b;
            engine::Scheduler& second = t == 0 ? b : a;
            while (std::chrono::steady_clock::now() < end) {
                std::atomic<long> sum{0};
                engine::Context c;
                for (int i = 0; i < 20; ++i)
                    lent::submit(first, c, [&, i] {
                        auto body = [&](std::ptrdiff_t k) { sum += k; };
                        engine::blockingFor(second, 0, 50 + i, body, 64, 0);
                    });
                lent::waitFor(first, c);
                long want = 0;
                for (int i = 0; i < 20; ++i) want += (50L + i) * (49L + i) / 2;
                ASSERT_EQ(sum.load(), want);
                ++done;
            }
        });
    for (auto& th : outside) th.join();
    EXPECT_GT(done.load(), 0);
    EXPECT_TRUE(lent::settles(b));
}

TEST(LentWorkers, ABorrowerResizesAndStopsWhileItsSessionsComeAndGo)
{
    engine::Scheduler a(2);
    engine::SchedulerLender lender(a);
    for (int round = 0; round < 20; ++round) {
        auto b = std::make_unique<engine::Scheduler>(1 + round % 3, lender.table());
        std::atomic<int> n{0};
        engine::Context c;
        for (int i = 0; i < 200; ++i) lent::submit(*b, c, [&] { ++n; });
        if (round % 2) b->resize(2);  // sessions asked for before the resize are run or stop
        lent::waitFor(*b, c);
        EXPECT_EQ(n.load(), 200);
        // Destroyed with sessions maybe still queued in a or running: it waits for them.
        b.reset();
    }
}

TEST(LentWorkers, ALenderWithoutWorkersRunsSessionsOnTheCaller)
{
    engine::Scheduler a(0);
    engine::SchedulerLender lender(a);
    engine::Scheduler b(2, lender.table());
    std::atomic<int> n{0};
    engine::Context c;
    std::thread pusher([&] {
        for (int i = 0; i < 100; ++i) lent::submit(b, c, [&] { ++n; });
    });
    pusher.join();
    lent::waitFor(b, c);
    EXPECT_EQ(n.load(), 100);
}

namespace lent {
using test_service::AsServiceThread;
}  // namespace lent

TEST(LentWorkers, WorkWhoseSessionsTheLenderDroppedGetsNewOnesWhenTheServiceThreadWaits)
{
    engine::Scheduler a(1);
    engine::SchedulerLender lender(a);
    engine::Scheduler b(2, lender.table());
    // a's only worker is held: the sessions b asks for wait in a's queue.
    std::atomic<bool> started{false}, release{false};
    engine::Context hold;
    lent::submit(a, hold, [&] {
        started = true;
        while (!release) std::this_thread::yield();
    });
    while (!started) std::this_thread::yield();
    lent::AsServiceThread asMain;
    engine::Context c;
    std::atomic<int> n{0};
    for (int i = 0; i < 50; ++i) lent::submit(b, c, [&] { ++n; });
    EXPECT_GT(b.lentSlotsInUse(), 0);
    a.dropQueued();  // as an interrupt does: the sessions are dropped unrun
    EXPECT_EQ(b.lentSlotsInUse(), 0);
    release = true;
    lent::waitFor(a, hold);
    // The service thread runs no task: only a new session can do b's work.
    const bool finished = b.waitUntil(&c, [&] { return c.done(); }, std::chrono::steady_clock::now() + 20s);
    EXPECT_TRUE(finished);
    EXPECT_EQ(n.load(), 50);
    EXPECT_TRUE(lent::settles(b));
}
