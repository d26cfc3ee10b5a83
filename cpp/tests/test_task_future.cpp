// async(f)'s TaskFuture and the state that holds its call (issue 38): get()
// on the worker that queued the task takes it back (ApiTable::futureTakeBack)
// and runs the call itself; the call lives in the future's state, not in the
// task's record. Every promise of a Future must hold on every path: taken
// back, stolen, run for the getter, dropped; for every kind of callable and
// result. Meant for the TSan and ASan builds too (a callable destroyed twice
// or never, a state freed twice, show there).
#include <RcppSpool.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

using namespace std::chrono_literals;

namespace {

template <class T>
struct IsTaskFuture : std::false_type {};
template <class T, class C>
struct IsTaskFuture<RcppSpool::TaskFuture<T, C>> : std::true_type {};

//! Runs `body` as a task of the global pool with `workers` workers.
template <class Body>
void onGlobalPool(std::size_t workers, Body body)
{
    auto& pool = RcppSpool::ThreadPool::globalInstance();
    pool.setNumThreads(workers);
    RcppSpool::async([&] { body(); }).get();
    pool.wait();
    pool.setNumThreads(2);
}

//! A callable that is not trivially copyable, larger than a task's record
//! (48 bytes of storage), that counts its live copies in `alive`.
struct Counted {
    std::shared_ptr<int> alive;
    std::vector<int> data;
    std::array<char, 64> pad{};
    int operator()() const { return static_cast<int>(data.size()) + *alive; }
};

// Out of line: its caller must read the array from where it is, when it calls.
[[gnu::noinline]] long sumOf(const std::array<long, 5>& v)
{
    long s = 0;
    for (long x : v) s += x;
    return s;
}

long fib(int n)
{
    if (n < 2) return n;
    auto x = RcppSpool::async([n] { return fib(n - 1); });
    const long y = fib(n - 2);
    return x.get() + y;
}

}  // namespace

TEST(TaskFuture, AsyncReturnsItAndItConvertsToEveryFuture)
{
    [[maybe_unused]] const auto small = [] { return 1; };
    static_assert(IsTaskFuture<decltype(RcppSpool::async(small))>::value, "async(f): typed by its call");
    [[maybe_unused]] const auto add = [](int a, int b) { return a + b; };
    static_assert(IsTaskFuture<decltype(RcppSpool::async(add, 1, 2))>::value, "with arguments");
    static_assert(!std::is_copy_constructible<decltype(RcppSpool::async(small))>::value, "move-only");
    std::vector<RcppSpool::Future<int>> futures;
    for (int i = 0; i < 10; ++i) futures.push_back(RcppSpool::async([i] { return i; }));
    RcppSpool::Future<int> f = RcppSpool::async([] { return 10; });
    std::future<int> s = RcppSpool::async([] { return 11; });
    std::shared_future<int> sh = RcppSpool::async([] { return 12; });
    auto shared = RcppSpool::async([] { return 13; }).share();
    int sum = 0;
    for (auto& x : futures) sum += x.get();
    EXPECT_EQ(sum, 45);
    EXPECT_EQ(f.get(), 10);
    EXPECT_EQ(s.get(), 11);
    EXPECT_EQ(sh.get(), 12);
    EXPECT_EQ(shared.get(), 13);
    // wait(), wait_for(), valid(), a moved-from one, get() twice.
    auto t = RcppSpool::async([] { return 14; });
    t.wait();
    EXPECT_EQ(t.wait_for(0s), std::future_status::ready);
    EXPECT_TRUE(t.valid());
    auto u = std::move(t);
    EXPECT_FALSE(t.valid());
    EXPECT_EQ(u.get(), 14);
    EXPECT_FALSE(u.valid());
    EXPECT_THROW(u.get(), std::future_error);
}

// On one worker nobody steals: every get() takes its own task back and runs
// the call itself. The results are right, and the pool counts nothing left.
TEST(TaskFuture, GetTakesItsTaskBackAndRunsTheCallItself)
{
    auto& pool = RcppSpool::ThreadPool::globalInstance();
    onGlobalPool(1, [&] {
        const std::size_t pushed = pool.scheduler().tasksPushed();
        EXPECT_EQ(fib(15), 610);
        EXPECT_GE(pool.scheduler().tasksPushed() - pushed, 986u);
        EXPECT_EQ(pool.scheduler().tasksQueued(), 0u);
        EXPECT_EQ(pool.scheduler().tasksRunning(), 1u);  // this task only
        // The call runs on the getter's thread, after the tasks pushed above it.
        const auto me = std::this_thread::get_id();
        std::atomic<int> later{0};
        auto a = RcppSpool::async([&] { return std::make_pair(std::this_thread::get_id(), later.load()); });
        auto b = RcppSpool::async([&] { later += 1; });
        const auto r = a.get();
        EXPECT_EQ(r.first, me);
        EXPECT_EQ(r.second, 1);
        b.get();
    });
}

// Every kind of result and an exception, taken back: the exception reaches
// get() as thrown (not copied into the state), the state is freed once.
TEST(TaskFuture, TakenBackGivesEveryKindOfResultAndException)
{
    int target = 5;
    onGlobalPool(1, [&] {
        for (int round = 0; round < 50; ++round) {
            EXPECT_EQ(RcppSpool::async([] { return std::string(40, 'x'); }).get().size(), 40u);
            EXPECT_EQ(*RcppSpool::async([] { return std::make_unique<int>(3); }).get(), 3);
            int& r = RcppSpool::async([&target]() -> int& { return target; }).get();
            EXPECT_EQ(&r, &target);
            RcppSpool::async([&target] { ++target; }).get();
            EXPECT_THROW(RcppSpool::async([]() -> long { throw std::out_of_range("taken back"); }).get(),
                         std::out_of_range);
            EXPECT_THROW(RcppSpool::async([] { throw std::length_error("void"); }).get(), std::length_error);
        }
    });
    EXPECT_EQ(target, 55);
}

// A callable the record cannot hold (not trivially copyable, larger than 48
// bytes) lives in the state: destroyed exactly once on every path (taken
// back, run by a thief, run after its Future went, dropped with its pool).
TEST(TaskFuture, ACallHeldByTheStateIsDestroyedOnceOnEveryPath)
{
    auto alive = std::make_shared<int>(1);
    const Counted call{alive, std::vector<int>(100, 0), {}};
    onGlobalPool(1, [&] {
        for (int i = 0; i < 20; ++i) EXPECT_EQ(RcppSpool::async(call).get(), 101);  // taken back
        RcppSpool::Future<int> kept = RcppSpool::async(call);  // untyped: run for the getter
        EXPECT_EQ(kept.get(), 101);
        { auto dropped = RcppSpool::async(call); }  // its destructor waits: run, result dropped
    });
    EXPECT_EQ(alive.use_count(), 2);  // `call` and `alive`
    onGlobalPool(2, [&] {
        std::vector<RcppSpool::Future<int>> many;  // the other worker steals some
        for (int i = 0; i < 200; ++i) many.push_back(RcppSpool::async(call));
        int sum = 0;
        for (auto& f : many) sum += f.get();
        EXPECT_EQ(sum, 200 * 101);
    });
    EXPECT_EQ(alive.use_count(), 2);
    // Dropped unrun: queued on a pool that is destroyed before it runs them.
    {
        RcppSpool::ThreadPool pool(1);
        pool.pause();
        std::vector<RcppSpool::Future<int>> queued;
        for (int i = 0; i < 5; ++i) queued.push_back(pool.pushReturn(call));
        EXPECT_EQ(alive.use_count(), 7);
        pool.unpause();
        for (auto& f : queued) EXPECT_EQ(f.get(), 101);
    }
    EXPECT_EQ(alive.use_count(), 2);
    {
        auto pool = std::make_unique<RcppSpool::ThreadPool>(1);
        pool->pause();
        std::vector<RcppSpool::Future<int>> queued;
        for (int i = 0; i < 5; ++i) queued.push_back(pool->pushReturn(call));
        pool.reset();  // drops them: each future reports the cancellation
        for (auto& f : queued) EXPECT_THROW(f.get(), std::runtime_error);
    }
    EXPECT_EQ(alive.use_count(), 2);
}

// The user's interrupt: a task taken back is not run, get() reports it.
TEST(TaskFuture, ATaskTakenBackAfterAnInterruptIsNotRun)
{
    std::atomic<bool> done{false};
    auto& pool = RcppSpool::ThreadPool::globalInstance();
    pool.setNumThreads(1);
    auto alive = std::make_shared<int>(1);
    pool.push([&, alive] {
        std::atomic<bool> ran{false};
        auto i = RcppSpool::async([&ran, alive] { ran = true; });
        RcppSpool::engine::interruptFlag().store(true);
        EXPECT_THROW(i.get(), RcppSpool::UserInterruptException);
        RcppSpool::engine::interruptFlag().store(false);
        EXPECT_FALSE(ran.load());
        done = true;
    });
    // Not in a wait of the library while the flag is up.
    while (!done) std::this_thread::sleep_for(1ms);
    pool.wait();
    pool.setNumThreads(2);
    EXPECT_EQ(alive.use_count(), 1);  // the call's copy went with it
}

// A result aligned beyond what operator new gives, its call small: the
// record holds the call, the state comes from the heap's aligned new (not
// the thread caches), and a task taken back frees it so (ASan checks).
TEST(TaskFuture, AnOveralignedResultIsTakenBackAndFreedAligned)
{
    struct alignas(64) Wide {
        double v[8];
    };
    [[maybe_unused]] const auto make = [] { return Wide{}; };
    static_assert(IsTaskFuture<decltype(RcppSpool::async(make))>::value, "the call small: a TaskFuture");
    onGlobalPool(1, [] {
        for (int i = 0; i < 10; ++i) {
            auto f = RcppSpool::async([i] { return Wide{{static_cast<double>(i)}}; });
            const Wide w = f.get();
            EXPECT_EQ(w.v[0], i);
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&w) % 64, 0u);
        }
    });
}

// A callable aligned beyond what operator new gives cannot live in a state:
// async() returns a plain Future, and the call still runs once, aligned.
TEST(TaskFuture, AnOveralignedCallIsAPlainFuture)
{
    struct alignas(64) Wide {
        double v[8];
        int operator()() const { return reinterpret_cast<std::uintptr_t>(this) % 64 == 0 ? 8 : -1; }
    };
    static_assert(std::is_same<decltype(RcppSpool::async(Wide{})), RcppSpool::Future<int>>::value,
                  "an over-aligned call: a Future");
    onGlobalPool(1, [] { EXPECT_EQ(RcppSpool::async(Wide{}).get(), 8); });
    EXPECT_EQ(RcppSpool::async(Wide{}).get(), 8);
}

// A TaskFuture moved to another thread (outside the pool) before get():
// that thread cannot take the task back; it waits for a worker (the other
// one: this one waits in join()) to run it.
TEST(TaskFuture, MovedToAnotherThreadBeforeGetWaitsThere)
{
    onGlobalPool(2, [] {
        auto f = RcppSpool::async([] { return std::this_thread::get_id(); });
        std::thread::id ranOn, waitedOn;
        std::thread other([&, g = std::move(f)]() mutable {
            ranOn = g.get();
            waitedOn = std::this_thread::get_id();
        });
        other.join();  // this worker is blocked here: its task waits until...
        EXPECT_NE(ranOn, waitedOn);
    });
}

// A task the runtime refuses (ApiTable::futureSubmit reports a failure: no
// thread could be started for a pool a join() stopped) is dropped as the
// client drops it (client::discardAndThrow()): a call held by the state is
// destroyed once, the refusal thrown, and the Future reports the task
// cancelled (nothing waits forever, nothing leaks: ASan).
TEST(TaskFuture, ARefusedTaskDropsItsCallAndItsFutureReportsIt)
{
    using State = RcppSpool::client::FutureState<int>;
    using Computes = RcppSpool::client::StateTask<int, Counted>;
    auto alive = std::make_shared<int>(1);
    const Counted call{alive, std::vector<int>(3, 0), {}};
    State* s = State::withCall(RcppSpool::ThreadPool::globalInstance().handle(), 2,
                               RcppSpool::client::inlineOpOf<Computes>(), Counted(call));
    RcppSpool::TaskFuture<int, Counted> future(s);
    EXPECT_EQ(alive.use_count(), 3);
    RcppSpool::table::TaskUnit task = RcppSpool::client::makeTask(Computes{s});
    EXPECT_ANY_THROW(RcppSpool::client::discardAndThrow(task, RcppSpool::table::kFailed));
    EXPECT_EQ(alive.use_count(), 2);  // the state's copy is gone
    EXPECT_THROW(future.get(), std::runtime_error);  // cancelled
}

// A call taken back whose record holds it (40 bytes: the most a record
// holds beside the state's core) and that queues tasks itself: those reuse
// the deque's slot it came from, so get() runs a copy, not the slot (run
// from the slot, it read the next task's words: a wrong sum).
TEST(TaskFuture, ACallTakenBackFromItsRecordSurvivesItsOwnSpawns)
{
    onGlobalPool(1, [] {
        for (int round = 0; round < 20; ++round) {
            const std::array<long, 5> v{{round, 2, 3, 4, 5}};
            const auto call = [v] {
                long inner = 0;
                // Records as large, other words: they overwrite the whole slot.
                for (long i = 0; i < 4; ++i) {
                    const std::array<long, 5> w{{i, -1, -1, -1, -1}};
                    inner += RcppSpool::async([w] { return w[0]; }).get();
                }
                const std::array<long, 5> hundred{{100, -1, -1, -1, -1}};
                auto pending = RcppSpool::async([hundred] { return hundred[0]; });  // queued, on top of the slot
                return sumOf(v) + inner + pending.get();  // v read after the spawns
            };
            static_assert(RcppSpool::client::kCallInRecord<long, RcppSpool::detail::BoundCall<decltype(call)>>,
                          "a call the record holds");
            // A task below it, so that the pop leaves the slot where the
            // next push goes (the last task's pop moves both ends past it).
            auto below = RcppSpool::async([] { return 1L; });
            auto f = RcppSpool::async(call);
            EXPECT_EQ(f.get(), round + 14 + 6 + 100);
            EXPECT_EQ(below.get(), 1L);
        }
    });
}
