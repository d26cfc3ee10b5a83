// Every C++ precondition a user can get wrong gives a clear error or a
// documented behaviour: never a crash or a hang.
#include <RcppSpool.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

TEST(BadInput, HugeThreadCountsAreRejected)
{
    EXPECT_THROW(RcppSpool::ThreadPool pool(1025), std::invalid_argument);
    RcppSpool::ThreadPool pool(1);
    EXPECT_THROW(pool.setNumThreads(static_cast<std::size_t>(-1)), std::invalid_argument);
    EXPECT_EQ(pool.getNumThreads(), 1u);  // unchanged after the error
}

TEST(BadInput, ReversedAndEmptyRangesDoNothing)
{
    std::atomic<int> calls{0};
    RcppSpool::parallelFor(10, 0, [&](std::ptrdiff_t) { calls++; });
    RcppSpool::parallelFor(0, 0, [&](std::ptrdiff_t) { calls++; });
    EXPECT_EQ(RcppSpool::parallelReduce(9, 3, 7, [](std::ptrdiff_t) { return 1; }, std::plus<int>()), 7);
    std::vector<int> empty;
    RcppSpool::parallelForEach(empty, [&](int) { calls++; });
    RcppSpool::ThreadPool pool(2);
    pool.parallelForEach(empty, [&](int) { calls++; });
    pool.map([&](int) { calls++; }, empty);
    pool.wait();
    EXPECT_EQ(calls.load(), 0);
}

TEST(BadInput, NBatchesZeroOrLargerThanTheRange)
{
    for (std::size_t nb : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(1) << 40}) {
        std::vector<std::atomic<int>> hits(50);
        for (auto& h : hits) h = 0;
        RcppSpool::parallelFor(0, 50, [&](std::ptrdiff_t i) { hits[i]++; }, 2, nb);
        for (auto& h : hits) ASSERT_EQ(h.load(), 1) << "nBatches " << nb;
    }
}

TEST(BadInput, AnEmptyStdFunctionFailsLikeCallingIt)
{
    RcppSpool::ThreadPool pool(2);
    pool.push(std::function<void()>());
    EXPECT_THROW(pool.wait(), std::bad_function_call);
    auto f = pool.pushReturn(std::function<int()>());
    EXPECT_THROW(f.get(), std::bad_function_call);
    EXPECT_THROW(RcppSpool::parallelFor(0, 10, std::function<void(std::ptrdiff_t)>()), std::bad_function_call);
    pool.wait();  // clean afterwards
}

TEST(BadInput, WaitFromInsideATaskDoesNotDeadlock)
{
    RcppSpool::ThreadPool pool(1);  // a single worker: a blocking wait would hang
    std::atomic<bool> done{false};
    pool.push([&] {
        pool.push([] {});
        pool.wait();
        RcppSpool::wait();  // the global pool, from a task of another pool
        done = true;
    });
    pool.wait();
    EXPECT_TRUE(done.load());
}

TEST(BadInput, WaitFromAThreadThatDidNotPush)
{
    RcppSpool::ThreadPool pool(2);
    std::atomic<int> n{0};
    for (int i = 0; i < 1000; ++i) pool.push([&] { n++; });
    std::thread other([&] { pool.wait(); });  // waits for everything pushed so far
    other.join();
    EXPECT_EQ(n.load(), 1000);
}

TEST(BadInput, UseAfterJoinRestartsTheWorkers)
{
    // As RcppThread's: join() waits and stops the workers; the pool stays usable.
    RcppSpool::ThreadPool pool(2);
    std::atomic<int> n{0};
    pool.push([&] { n++; });
    pool.join();
    EXPECT_EQ(n.load(), 1);
    EXPECT_EQ(pool.getNumThreads(), 0u);
    EXPECT_NO_THROW(pool.wait());
    EXPECT_NO_THROW(pool.join());  // twice is fine
    auto f = pool.pushReturn([] { return 5; });
    EXPECT_EQ(pool.getNumThreads(), 2u);
    EXPECT_EQ(f.get(), 5);
    pool.parallelFor(0, 10, [&](std::ptrdiff_t) { n++; });
    pool.join();
    EXPECT_EQ(n.load(), 11);
}

TEST(BadInput, GetOnAnEmptyOrUsedFutureThrowsFutureError)
{
    RcppSpool::Future<int> empty;
    EXPECT_THROW(empty.get(), std::future_error);
    EXPECT_THROW(empty.wait(), std::future_error);
    auto f = RcppSpool::async([] { return 1; });
    f.get();
    EXPECT_THROW(f.get(), std::future_error);
}

TEST(BadInput, JoiningAThreadTwiceOrADefaultThreadThrows)
{
    RcppSpool::Thread t([] {});
    t.join();
    EXPECT_THROW(t.join(), std::system_error);
    RcppSpool::Thread none;
    EXPECT_THROW(none.join(), std::system_error);
}

TEST(BadInput, ResizeFromInsideOwnTaskIsAnError)
{
    RcppSpool::ThreadPool pool(1);
    pool.push([&] { pool.resize(3); });
    EXPECT_THROW(pool.wait(), std::logic_error);
    EXPECT_EQ(pool.getNumThreads(), 1u);
}

// The runtime's calls for tasks and pools keep no message buffer in the
// caller's frame: the message of a failure comes from the thread's last
// one (ApiTable::lastMessage), and must be this failure's, not an earlier.
TEST(BadInput, ErrorsOfPoolCallsSayWhatWasWrong)
{
    try {
        RcppSpool::ThreadPool pool(1025);
        ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "RcppSpool: a pool has 0 to 1024 workers, not 1025");
    }
    RcppSpool::ThreadPool pool(1);
    try {
        pool.setNumThreads(2000);
        ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "RcppSpool: a pool has 0 to 1024 workers, not 2000");
    }
    pool.push([&] { pool.resize(3); });
    try {
        pool.wait();
        ADD_FAILURE() << "no exception";
    } catch (const std::logic_error& e) {
        EXPECT_NE(std::string(e.what()).find("own tasks"), std::string::npos) << e.what();
    }
}
