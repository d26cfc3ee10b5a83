// Entry points behind tests/testthat/test-faults.R: the R side of the
// reliability suite (issue 7). Interrupts at random moments during mixed work,
// exceptions thrown by 1% of a million iterations, very long output, and many
// repeated calls (memory). They use the public headers as a user package would.
#include <Rcpp.h>

#include <RcppSpool.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void sleepUs(double us)
{
    if (us > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us));
}

// Busy for `us` microseconds (for small tasks: a sleep would last far longer).
void spinUs(double us)
{
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double, std::micro>(us));
    while (Clock::now() < end) {
    }
}

// `us` microseconds of waiting in slices of at most 100 us, with
// checkUserInterrupt() before each slice (a body that does check).
void checkedWaitUs(double us)
{
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double, std::micro>(us));
    for (;;) {
        RcppSpool::checkUserInterrupt();
        const double left = std::chrono::duration<double, std::micro>(end - Clock::now()).count();
        if (left <= 0) break;
        sleepUs(std::min(100.0, left));
    }
}

// Work that runs after the call that started it has returned (or unwound):
// had it captured the caller's locals by reference, it would be using freed
// memory. Calls of .spool_fault_work() are numbered; each unit of work knows
// its call's number and counts itself here if that call has already ended.
std::atomic<unsigned long> lastCall{0};      // the number of the latest call
std::atomic<unsigned long> lastReturned{0};  // the number of the latest call that ended
std::atomic<long long> lateUnits{0};
std::mutex lateMutex;
std::vector<double> lateCalls;  // the numbers of the calls with late units (each once)

void unitDone(unsigned long call)
{
    if (lastReturned.load(std::memory_order_acquire) < call) return;
    lateUnits.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lk(lateMutex);
    if (lateCalls.size() < 100 && std::find(lateCalls.begin(), lateCalls.end(), double(call)) == lateCalls.end())
        lateCalls.push_back(static_cast<double>(call));
}

struct CallScope {
    unsigned long id = ++lastCall;
    ~CallScope() { lastReturned.store(id, std::memory_order_release); }
};

// The sum of lo, ..., hi - 1, one task per split (recursive async, arguments
// by value), each leaf waiting `us` microseconds; `call` as in unitDone().
double recursiveSum(std::ptrdiff_t lo, std::ptrdiff_t hi, double us, unsigned long call)
{
    if (hi - lo <= 1) {
        sleepUs(us);
        unitDone(call);
        return hi > lo ? static_cast<double>(lo) : 0.0;
    }
    const std::ptrdiff_t mid = lo + (hi - lo) / 2;
    auto left = RcppSpool::async(recursiveSum, lo, mid, us, call);
    const double right = recursiveSum(mid, hi, us, call);
    return left.get() + right;
}

// The same recursion with a TaskGroup of one task a call: the shape whose
// task a group keeps and runs in wait() (task_group.h).
double recursiveGroupSum(std::ptrdiff_t lo, std::ptrdiff_t hi, double us, unsigned long call)
{
    if (hi - lo <= 1) {
        sleepUs(us);
        unitDone(call);
        return hi > lo ? static_cast<double>(lo) : 0.0;
    }
    const std::ptrdiff_t mid = lo + (hi - lo) / 2;
    double left = 0;
    RcppSpool::TaskGroup g;
    g.run([&left, lo, mid, us, call] { left = recursiveGroupSum(lo, mid, us, call); });
    const double right = recursiveGroupSum(mid, hi, us, call);
    g.wait();
    return left + right;
}

}  // namespace

// One call of the random mix of test-faults.R: `n` units of work of about
// `us` microseconds each, of the given kind, on `nThreads` threads:
//   "nocheck"    RcppSpool::parallelFor, bodies sleep and never check
//   "check"      RcppSpool::parallelFor, bodies call checkUserInterrupt() every 100 us
//   "push"       a local ThreadPool(nThreads): n small busy tasks pushed, then wait()
//   "gpush"      the same on the global pool (RcppSpool::push, RcppSpool::wait)
//   "async"      recursive RcppSpool::async over [0, n), leaves sleep (returns the sum of 0..n-1)
//   "taskgroup"  a TaskGroup of n / 4 tasks, each running a nested TaskGroup of 4
//   "grouprec"   as "async" with a TaskGroup of one task a call (kept by the group, mostly)
//   "output"     RcppSpool::parallelFor, each body prints a line through Rcout, then sleeps
//   "nested"     RcppSpool::parallelFor over n / 10 items, each a parallelFor over 10
// Returns how many units ran (for "async" and "grouprec": the sum), so that a
// call that finishes can be checked: n, or n (n - 1) / 2 for those two. Units that run
// after their call ended are counted (see .spool_fault_late_units()).
// [[Rcpp::export(.spool_fault_work, rng = false)]]
double spoolFaultWork(std::string kind, int n, double us, int nThreads)
{
    if (n < 0) throw std::invalid_argument("n must be >= 0");
    const auto nt = static_cast<std::size_t>(nThreads);
    CallScope scope;
    const unsigned long call = scope.id;
    std::atomic<long long> done{0};
    if (kind == "nocheck") {
        RcppSpool::parallelFor(0, n, [&](std::ptrdiff_t) {
            sleepUs(us);
            unitDone(call);
            done++;
        }, nt);
    } else if (kind == "check") {
        RcppSpool::parallelFor(0, n, [&](std::ptrdiff_t) {
            checkedWaitUs(us);
            unitDone(call);
            done++;
        }, nt);
    } else if (kind == "push") {
        RcppSpool::ThreadPool pool(nt);
        for (int i = 0; i < n; ++i)
            pool.push([&done, us, call] {
                spinUs(us);
                unitDone(call);
                done++;
            });
        pool.wait();
    } else if (kind == "gpush") {
        for (int i = 0; i < n; ++i)
            RcppSpool::push([&done, us, call] {
                spinUs(us);
                unitDone(call);
                done++;
            });
        RcppSpool::wait();
    } else if (kind == "async") {
        return recursiveSum(0, n, us, call);
    } else if (kind == "grouprec") {
        return recursiveGroupSum(0, n, us, call);
    } else if (kind == "taskgroup") {
        RcppSpool::TaskGroup outer;
        for (int i = 0; i < n / 4; ++i)
            outer.run([&done, us, call] {
                RcppSpool::TaskGroup inner;
                for (int k = 0; k < 4; ++k)
                    inner.run([&done, us, call] {
                        sleepUs(us);
                        unitDone(call);
                        done++;
                    });
                inner.wait();
            });
        outer.wait();
        return static_cast<double>(done.load()) + n % 4;  // n / 4 groups of 4
    } else if (kind == "output") {
        RcppSpool::parallelFor(0, n, [&](std::ptrdiff_t i) {
            RcppSpool::Rcout << "output line " << i << " of " << n << "\n";
            sleepUs(us);
            unitDone(call);
            done++;
        }, nt);
    } else if (kind == "nested") {
        RcppSpool::parallelFor(0, n / 10, [&](std::ptrdiff_t) {
            RcppSpool::parallelFor(0, 10, [&](std::ptrdiff_t) {
                sleepUs(us);
                unitDone(call);
                done++;
            }, nt);
        }, nt);
        return static_cast<double>(done.load()) + n % 10;
    } else {
        throw std::invalid_argument("unknown kind: " + kind);
    }
    return static_cast<double>(done.load());
}

// How many units of work of .spool_fault_work() ran after their call had
// returned (with an interrupt or an error): must stay 0.
// [[Rcpp::export(.spool_fault_late_units, rng = false)]]
double spoolFaultLateUnits() { return static_cast<double>(lateUnits.load()); }

// The numbers of the calls of .spool_fault_work() (1 for the first call of
// the process, ...) that had units of work run after they returned (at most 100).
// [[Rcpp::export(.spool_fault_late_calls, rng = false)]]
Rcpp::NumericVector spoolFaultLateCalls()
{
    std::lock_guard<std::mutex> lk(lateMutex);
    return Rcpp::NumericVector(lateCalls.begin(), lateCalls.end());
}

// A loop over [0, n) in which every `every`-th iteration (i % every ==
// every - 1) throws std::runtime_error("failure at iteration <i>").
//   where "global": RcppSpool::parallelFor(..., nThreads)
//   where "pool":   a ThreadPool(nThreads), parallelFor then wait()
//   where "nested": RcppSpool::parallelFor over n / 1000 blocks of 1000, each a nested parallelFor
// With `catchInCpp`, the exception is caught here and a list is returned:
// its message, how many iterations ran, how many threw. Otherwise the
// exception goes to R (and the function returns only when nothing threw).
// [[Rcpp::export(.spool_fault_throw_every, rng = false)]]
Rcpp::List spoolFaultThrowEvery(double n, int every, int nThreads, std::string where, bool catchInCpp)
{
    const auto len = static_cast<std::ptrdiff_t>(n);
    const auto nt = static_cast<std::size_t>(nThreads);
    std::atomic<long long> ran{0}, threw{0};
    auto body = [&](std::ptrdiff_t i) {
        ran.fetch_add(1, std::memory_order_relaxed);
        if (i % every == every - 1) {
            threw.fetch_add(1, std::memory_order_relaxed);
            throw std::runtime_error("failure at iteration " + std::to_string(i));
        }
    };
    std::string message;
    try {
        if (where == "global") {
            RcppSpool::parallelFor(0, len, body, nt);
        } else if (where == "pool") {
            RcppSpool::ThreadPool pool(nt);
            pool.parallelFor(0, len, body);
            pool.wait();
        } else if (where == "nested") {
            RcppSpool::parallelFor(0, len / 1000, [&](std::ptrdiff_t b) {
                RcppSpool::parallelFor(b * 1000, (b + 1) * 1000, body, nt);
            }, nt);
        } else {
            throw std::invalid_argument("unknown place: " + where);
        }
    } catch (const std::runtime_error& e) {
        if (!catchInCpp) throw;
        message = e.what();
    }
    return Rcpp::List::create(Rcpp::Named("message") = message,
                              Rcpp::Named("ran") = static_cast<double>(ran.load()),
                              Rcpp::Named("threw") = static_cast<double>(threw.load()));
}

// One line of `nChars` characters (the pattern "0123456789" repeated, then
// "\n") written through Rcout from a worker thread, in `pieces` << operations
// of about equal size, while `nOthers` other worker threads each print
// `otherLines` short lines ("other <t> line <i>"). `where`: "thread" (the
// long line from a RcppSpool::Thread, the others too), "pool" (all from tasks
// of a ThreadPool). The main thread prints "@@begin" before and "@@end" after.
// [[Rcpp::export(.spool_fault_long_line, rng = false)]]
void spoolFaultLongLine(double nChars, int pieces, int nOthers, int otherLines, std::string where)
{
    const auto total = static_cast<std::size_t>(nChars);
    std::string pattern;
    pattern.reserve(total);
    for (std::size_t i = 0; i < total; ++i) pattern.push_back(static_cast<char>('0' + i % 10));
    auto longLine = [&pattern, pieces, total] {
        const std::size_t step = (total + pieces - 1) / std::max(1, pieces);
        for (std::size_t at = 0; at < total; at += step) RcppSpool::Rcout << pattern.substr(at, step);
        RcppSpool::Rcout << "\n";
    };
    auto others = [otherLines](int t) {
        for (int i = 0; i < otherLines; ++i) RcppSpool::Rcout << "other " << t << " line " << i << "\n";
    };
    RcppSpool::Rcout << "@@begin\n";
    if (where == "thread") {
        std::vector<RcppSpool::Thread> threads;
        threads.emplace_back(longLine);
        for (int t = 0; t < nOthers; ++t) threads.emplace_back(others, t);
        for (auto& th : threads) th.join();
    } else if (where == "pool") {
        RcppSpool::ThreadPool pool(static_cast<std::size_t>(nOthers + 1));
        pool.push(longLine);
        for (int t = 0; t < nOthers; ++t) pool.push(others, t);
        pool.wait();
    } else {
        throw std::invalid_argument("unknown place: " + where);
    }
    RcppSpool::Rcout << "@@end\n";
}

// One call of the memory test: a parallel loop, tasks pushed to the global
// pool and waited for, recursive async, and a short-lived local pool; with
// `fail`, one loop iteration throws at the end (an R error). Returns a checksum:
// sum(0:999) + 100 + sum(0:63) + 10 = 501626.
// [[Rcpp::export(.spool_fault_small_mix, rng = false)]]
double spoolFaultSmallMix(int nThreads, bool fail)
{
    const auto nt = static_cast<std::size_t>(nThreads);
    std::atomic<long long> sum{0};
    RcppSpool::parallelFor(0, 1000, [&](std::ptrdiff_t i) { sum += i; }, nt);
    std::atomic<int> pushed{0};
    for (int i = 0; i < 100; ++i) RcppSpool::push([&pushed] { pushed++; });
    RcppSpool::wait();
    const double rec = recursiveSum(0, 64, 0, std::numeric_limits<unsigned long>::max());
    std::atomic<int> local{0};
    {
        RcppSpool::ThreadPool pool(nt);
        for (int i = 0; i < 10; ++i) pool.push([&local] { local++; });
        pool.wait();
    }
    if (fail)
        RcppSpool::parallelFor(0, 1000, [](std::ptrdiff_t i) {
            if (i == 999) throw std::runtime_error("planned failure");
        }, nt);
    return static_cast<double>(sum.load()) + pushed.load() + rec + local.load();
}

namespace {

// What one task of .spool_fault_wait_task() did.
struct TaskProbe {
    std::atomic<bool> callEnded{false};      // the C++ call that waits for it has returned or unwound
    std::atomic<bool> sawInterrupt{false};   // isInterrupted() was true in the task
    std::atomic<long> steps{0}, stepsAfterEnd{0};
};
std::shared_ptr<TaskProbe> lastProbe = std::make_shared<TaskProbe>();

}  // namespace

// One task of up to `n` steps of `ms` milliseconds that stops as soon as
// RcppSpool::isInterrupted() is true, waited for on R's main thread by
//   "push"        RcppSpool::push, then RcppSpool::wait()
//   "async"       RcppSpool::async(...).get()
//   "pushReturn"  ThreadPool(2).pushReturn(...).get() on a local pool
//   "thread"      RcppSpool::Thread, join()
// The task shares nothing with the call but a TaskProbe (by shared_ptr), so
// running after the call ended is safe here; in user code, whose tasks
// capture locals by reference, it is a use after free.
// [[Rcpp::export(.spool_fault_wait_task, rng = false)]]
double spoolFaultWaitTask(std::string kind, int n, double ms)
{
    auto probe = std::make_shared<TaskProbe>();
    lastProbe = probe;
    struct EndMark {
        std::shared_ptr<TaskProbe> p;
        ~EndMark() { p->callEnded = true; }
    } endMark{probe};
    auto task = [probe, n, ms] {
        for (int i = 0; i < n; ++i) {
            if (RcppSpool::isInterrupted()) {
                probe->sawInterrupt = true;
                break;
            }
            sleepUs(1000 * ms);
            probe->steps++;
            if (probe->callEnded) probe->stepsAfterEnd++;
        }
        return static_cast<double>(probe->steps.load());
    };
    if (kind == "push") {
        RcppSpool::push(task);
        RcppSpool::wait();
        return static_cast<double>(probe->steps.load());
    }
    if (kind == "async") return RcppSpool::async(task).get();
    if (kind == "pushReturn") {
        RcppSpool::ThreadPool pool(2);
        return pool.pushReturn(task).get();
    }
    if (kind == "thread") {
        RcppSpool::Thread t(task);
        t.join();
        return static_cast<double>(probe->steps.load());
    }
    throw std::invalid_argument("unknown kind: " + kind);
}

// The task of the last .spool_fault_wait_task() call: steps run, steps run
// after the call ended, and whether it saw the interrupt.
// [[Rcpp::export(.spool_fault_task_probe, rng = false)]]
Rcpp::List spoolFaultTaskProbe()
{
    return Rcpp::List::create(Rcpp::Named("steps") = static_cast<double>(lastProbe->steps.load()),
                              Rcpp::Named("stepsAfterEnd") = static_cast<double>(lastProbe->stepsAfterEnd.load()),
                              Rcpp::Named("sawInterrupt") = lastProbe->sawInterrupt.load());
}

namespace {
// C++ frames of .spool_fault_print_tasks() entered, and left by a return or
// an exception. A longjmp through them (R's error or interrupt handling)
// leaves them without running destructors: then entered > left.
std::atomic<long> scopesEntered{0}, scopesLeft{0};
}  // namespace

// `n` tasks on a ThreadPool(nThreads), each printing one line through Rcout
// ("task line <i>") and then sleeping `ms` milliseconds; R's main thread
// waits in wait(), releasing the lines as they come (through Rprintf). The
// tasks share only a TaskProbe (see .spool_fault_task_probe(); the pool and
// its tasks live on the heap), so they may safely outlive the call.
// [[Rcpp::export(.spool_fault_print_tasks, rng = false)]]
double spoolFaultPrintTasks(int n, double ms, int nThreads)
{
    scopesEntered++;
    struct Left {
        ~Left() { scopesLeft++; }
    } left;
    auto probe = std::make_shared<TaskProbe>();
    lastProbe = probe;
    struct EndMark {
        std::shared_ptr<TaskProbe> p;
        ~EndMark() { p->callEnded = true; }
    } endMark{probe};
    auto pool = std::make_unique<RcppSpool::ThreadPool>(static_cast<std::size_t>(nThreads));
    for (int i = 0; i < n; ++i)
        pool->push([probe, i, ms] {
            RcppSpool::Rcout << "task line " << i << "\n";
            sleepUs(1000 * ms);
            probe->steps++;
            if (probe->callEnded) probe->stepsAfterEnd++;
        });
    pool->wait();
    return static_cast<double>(probe->steps.load());
}

// c(entered, left) for the frames of .spool_fault_print_tasks().
// [[Rcpp::export(.spool_fault_scopes, rng = false)]]
Rcpp::NumericVector spoolFaultScopes()
{
    return Rcpp::NumericVector::create(static_cast<double>(scopesEntered.load()),
                                       static_cast<double>(scopesLeft.load()));
}

// Returns memory that malloc keeps but nobody uses to the system (glibc's
// malloc_trim(0), in every arena), so that RSS shows memory in use rather than
// the allocator's high-water marks. TRUE if available here.
// [[Rcpp::export(.spool_fault_malloc_trim, rng = false)]]
bool spoolFaultMallocTrim()
{
#ifdef __GLIBC__
    malloc_trim(0);
    return true;
#else
    return false;
#endif
}
