// Work pushed from inside tasks of a pool (loop iterations, pushed tasks,
// futures' tasks) is waited for by the outermost wait(), at every depth, with
// no wait() inside: RcppThread's defect 7 (DESIGN.md), and what RcppThread's
// own "Thread pool" tests do. A pool or a buffer freed after wait() while
// inner work still ran was memory corruption; ASan and TSan builds run these too.
#include <RcppSpool.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

int rounds(int standard)
{
    // Sanitizer builds are 5-20x slower; the point there is the race, not the count.
    if (const char* s = std::getenv("RCPPSPOOL_NESTING_ROUNDS")) return std::atoi(s);
    return standard;
}

//! Cells of an n x n x n cube, each to be touched exactly once.
struct Cube {
    explicit Cube(int n) : n(n), cells(static_cast<std::size_t>(n) * n * n) {}
    std::atomic<int>& at(int i, int j, int k) { return cells[(static_cast<std::size_t>(i) * n + j) * n + k]; }
    std::string check()
    {
        int wrong = 0;
        for (auto& c : cells)
            if (c.load() != 1) ++wrong;
        return wrong ? std::to_string(wrong) + " of " + std::to_string(cells.size()) + " cells not exactly 1" : "";
    }
    int n;
    std::vector<std::atomic<int>> cells;
};

}  // namespace

// The example of the issue, 3 levels deep, member loops only.
TEST(Nesting, ThreeLevelMemberLoopsWithoutInnerWait)
{
    for (int r = 0, R = rounds(1000); r < R; ++r) {
        auto pool = std::make_unique<RcppSpool::ThreadPool>(2);
        auto cube = std::make_unique<Cube>(6);
        pool->parallelFor(0, 6, [&](std::ptrdiff_t i) {
            pool->parallelFor(0, 6, [&, i](std::ptrdiff_t j) {
                pool->parallelFor(0, 6, [&, i, j](std::ptrdiff_t k) { cube->at(i, j, k)++; });
            });
        });
        pool->wait();
        const std::string bad = cube->check();
        ASSERT_EQ(bad, "") << "round " << r;
        pool.reset();  // freed right after wait(), as users do
    }
}

// Loops and pushes mixed at every level: push from an iteration, a loop from a
// pushed task, a loop from a future's task.
TEST(Nesting, LoopsPushesAndFuturesMixedWithoutInnerWait)
{
    for (int r = 0, R = rounds(1000); r < R; ++r) {
        auto pool = std::make_unique<RcppSpool::ThreadPool>(2);
        auto cube = std::make_unique<Cube>(5);
        std::vector<RcppSpool::Future<void>> futures;
        pool->parallelFor(0, 5, [&](std::ptrdiff_t i) {
            for (int j = 0; j < 5; ++j)
                pool->push([&, i, j] {
                    if (j % 2 == 0) {
                        pool->parallelFor(0, 5, [&, i, j](std::ptrdiff_t k) { cube->at(i, j, k)++; });
                    } else {
                        // A future's task that pushes: nobody keeps the future.
                        pool->pushReturn([&, i, j] {
                            for (int k = 0; k < 5; ++k) pool->push([&, i, j, k] { cube->at(i, j, k)++; });
                        });
                    }
                });
        });
        pool->wait();
        const std::string bad = cube->check();
        ASSERT_EQ(bad, "") << "round " << r;
        pool.reset();
    }
}

// The same through the global pool's free functions: blocking loops whose
// iterations push, waited for by wait().
TEST(Nesting, FreeLoopIterationsThatPushAreWaitedForByWait)
{
    auto& pool = RcppSpool::ThreadPool::globalInstance();
    for (int r = 0, R = rounds(1000); r < R; ++r) {
        Cube cube(6);
        RcppSpool::parallelFor(0, 6, [&](std::ptrdiff_t i) {
            for (int j = 0; j < 6; ++j)
                pool.parallelFor(0, 6, [&, i, j](std::ptrdiff_t k) { cube.at(i, j, k)++; });
        }, 3);
        RcppSpool::wait();
        const std::string bad = cube.check();
        ASSERT_EQ(bad, "") << "round " << r;
    }
}

// Waits inside tasks keep their meaning: an iteration's wait() waits for what
// that iteration pushed (its inner loop), at every level.
TEST(Nesting, WaitInsideAnIterationWaitsForWhatItPushed)
{
    for (int r = 0, R = rounds(200); r < R; ++r) {
        RcppSpool::ThreadPool pool(2);
        Cube cube(5);
        std::atomic<int> innerSawAll{0};
        pool.parallelFor(0, 5, [&](std::ptrdiff_t i) {
            pool.parallelFor(0, 5, [&, i](std::ptrdiff_t j) {
                pool.parallelFor(0, 5, [&, i, j](std::ptrdiff_t k) { cube.at(i, j, k)++; });
            });
            pool.wait();
            bool all = true;
            for (int j = 0; j < 5; ++j)
                for (int k = 0; k < 5; ++k) all = all && cube.at(static_cast<int>(i), j, k).load() == 1;
            if (all) innerSawAll++;
        });
        pool.wait();
        ASSERT_EQ(innerSawAll.load(), 5) << "round " << r;
        ASSERT_EQ(cube.check(), "") << "round " << r;
    }
}

// An exception thrown two levels down reaches the outermost wait().
TEST(Nesting, ExceptionInANestedIterationReachesTheOuterWait)
{
    RcppSpool::ThreadPool pool(2);
    pool.parallelFor(0, 4, [&](std::ptrdiff_t i) {
        pool.parallelFor(0, 4, [i](std::ptrdiff_t j) {
            if (i == 2 && j == 3) throw std::runtime_error("deep");
        });
    });
    try {
        pool.wait();
        FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "deep");
    }
    // The pool is clean afterwards.
    std::atomic<int> n{0};
    pool.parallelFor(0, 10, [&](std::ptrdiff_t) { n++; });
    pool.wait();
    EXPECT_EQ(n.load(), 10);
}
