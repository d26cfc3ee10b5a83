// A queue that cannot grow (no memory for a larger buffer): the task runs on
// the caller, at once, and nothing is lost. Scheduler::submit() never throws,
// which lets the runtime's submit entry call it without a handler. This
// binary replaces the global operator new, armed for one thread at a time.
#include <RcppSpool.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

namespace {
// Allocations of at least this many bytes fail on the armed thread (0: none).
thread_local std::size_t failFrom = 0;
std::atomic<int> failures{0};
}  // namespace

// (g++ sees malloc() here and free() in the deletes and cannot tell that
// they pair.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t bytes)
{
    if (failFrom != 0 && bytes >= failFrom) {
        ++failures;
        throw std::bad_alloc();
    }
    if (void* p = std::malloc(bytes ? bytes : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

TEST(QueueFull, ATaskThatCannotBeQueuedRunsOnTheCallerAndNothingIsLost)
{
    RcppSpool::ThreadPool pool(1);
    pool.pause();  // nothing starts: pushes fill the caller's queue
    std::atomic<int> ran{0};
    std::vector<std::thread::id> where(200);
    // The caller's queue holds 64 tasks before it grows to 128 (8 KB of
    // slots); from then on every larger buffer fails.
    failFrom = 8192;
    for (int i = 0; i < 200; ++i)
        pool.push([&ran, &where, i] {
            where[i] = std::this_thread::get_id();
            ++ran;
        });
    failFrom = 0;
    EXPECT_GT(failures.load(), 0);
    const int ranAtOnce = ran.load();
    EXPECT_GT(ranAtOnce, 0);    // those that found no room, on the caller
    EXPECT_LT(ranAtOnce, 200);  // those queued wait for the pause to end
    pool.unpause();
    pool.wait();
    EXPECT_EQ(ran.load(), 200);
    int onCaller = 0;
    for (const auto& id : where) onCaller += id == std::this_thread::get_id();
    EXPECT_GE(onCaller, ranAtOnce);
    EXPECT_EQ(pool.getTasksQueued(), 0u);
    EXPECT_EQ(pool.getTasksRunning(), 0u);
}
