// The versioned C table through which a client reaches the runtime.
//
// A client (a package built against these headers) packages what must be a
// template, the user's loop body, as an opaque unit: a function pointer and
// the address of its storage. Everything else (scheduler, workers, splitting
// and waiting, thread counts) is the runtime's code, compiled once, reached
// through this table: in R, RcppSpool's shared library serves it as the
// C-callable "RcppSpool_api"; in plain C++ it is compiled into the program
// (see client/api.h). Nothing that crosses it depends on a layout the
// runtime owns, and no exception crosses it: the runtime reports a status and
// a message, the client keeps its own exceptions and rethrows them itself,
// so a client and a runtime need not even share a C++ standard library.
//
// The table only grows: a new entry goes at the end with a new kApiVersion;
// no entry's signature or meaning ever changes. A client asks for the
// version it was built with and gets the table only from a runtime of that
// version or later, which has every entry it knows.
#pragma once

#include "../abi.h"

#include <cstddef>
#include <cstdint>

#include "task_unit.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace table {

//! What a call through the table reports.
enum ApiStatus : int {
    kOk = 0,
    kCallbackFailed = 1,   //!< the client's callback failed; the client kept its exception
    kInterrupted = 2,      //!< the user interrupted (Ctrl-C in R)
    kInvalidArgument = 3,  //!< a bad setting or argument; the message says which
    kFailed = 4,           //!< any other error of the runtime; the message says what
    kLogicError = 5,       //!< a call the object's state does not allow (since version 3)
};

//! What ApiTable::poolControl does.
enum PoolControl : int {
    kPoolNumThreads = 0,     //!< out: the number of workers
    kPoolSetNumThreads = 1,  //!< value: the new number of workers (0 to 1024)
    kPoolPause = 2,
    kPoolUnpause = 3,
    kPoolIsPaused = 4,       //!< out: 1 if paused
    kPoolTasksQueued = 5,    //!< out
    kPoolTasksRunning = 6,   //!< out
    kPoolStopWorkers = 7,    //!< stop the workers (after their running tasks) until new work comes
    kPoolTasksPushed = 8,    //!< out: tasks queued since the pool started
};

//! How ApiTable::submit counts a task.
enum SubmitHow : int {
    kSubmitPush = 0,     //!< as push(): waited for by the pool's wait() (or the pushing task's)
    kSubmitResult = 1,   //!< a task with a Future (its storage starts with its FutureCore*)
    kSubmitToGroup = 2,  //!< in the TaskGroup whose storage (GroupStorage) is `group`
};

//! ApiTable::futureWait's flags.
enum WaitFlags : int {
    kWaitAbandon = 1,  //!< if the wait ends unready (an interrupt), abandon the task and wait for it if it runs
    kWaitQuiet = 2,    //!< never report the interrupt (a destructor's wait)
};

//! nThreads for "what defaultThreads() says", decided by the runtime.
constexpr std::size_t kAutoThreads = static_cast<std::size_t>(-1);

//! A loop body as the runtime sees it: runs the indices [begin, end) of
//! `self`'s loop and returns 0, or nonzero when the body threw (the client
//! keeps the exception). Called concurrently from several threads.
using RangeFn = int (*)(void* self, std::ptrdiff_t begin, std::ptrdiff_t end);

//! A call that another thread hands to R's main thread (onMainThread()): its
//! functions are the client's code, and each completes and frees the call.
//! The runtime links queued calls through `next` and keeps `forkGeneration`;
//! the client leaves both alone. C layout: it crosses shared objects.
struct MainCall {
    void (*run)(MainCall*) = nullptr;     //!< on the main thread: run, complete, free
    void (*cancel)(MainCall*) = nullptr;  //!< not run (an interrupt, a fork): complete as such, free
    MainCall* next = nullptr;             //!< the runtime's
    unsigned forkGeneration = 0;          //!< the runtime's
};

//! How ApiTable::write hands text over.
enum WriteKind : int {
    kWritePiece = 0,  //!< what one `<<` formatted: complete lines go, the rest waits for its line's end
    kWriteFlush = 1,  //!< the same, and the thread's unfinished line goes too (std::flush, std::endl)
    kWriteWhole = 2,  //!< text that is not part of the thread's lines (a progress bar's redraw)
};

//! A progress object's drawing (of what is due), called by R's main thread
//! when it is serviced (at least every 10 ms while it waits).
using DrawFn = void (*)(void* self);

//! The runtime's entry points. C layout: it crosses shared objects. An
//! entry that reports a message takes a buffer (`message`, `messageSize`);
//! those of version 3 accept none (null), and then keep the message for
//! lastMessage().
struct ApiTable {
    std::uint32_t version;  //!< kApiVersion of the runtime
    std::uint32_t size;     //!< sizeof(ApiTable) of the runtime: entries past it are absent

    // -- version 1 --
    //! Runs body(self, b, e) over chunks [b, e) covering [begin, end) on the
    //! caller and up to nThreads - 1 workers of the global pool (kAutoThreads:
    //! defaultThreads()); nBatches as RcppSpool::parallelFor. Blocks until
    //! done. On an error, writes a message of at most messageSize bytes
    //! (ending in '\0') to `message`.
    int (*parallelFor)(std::ptrdiff_t begin, std::ptrdiff_t end, RangeFn body, void* self, std::size_t nThreads,
                       std::size_t nBatches, char* message, std::size_t messageSize);
    //! availableCores() into `*out`; kInvalidArgument for a bad setting.
    int (*availableCores)(std::size_t* out, char* message, std::size_t messageSize);
    //! defaultThreads() into `*out`; kInvalidArgument for a bad setting.
    int (*defaultThreads)(std::size_t* out, char* message, std::size_t messageSize);

    // -- version 2: the host's services (R's console, its interrupt, its main thread) --
    //! Rcout (stream 0) and Rcerr (1), from any thread: `size` bytes of
    //! text, handed over as `kind` (a WriteKind) says. On R's main thread
    //! the text is written at once, after the lines other threads completed;
    //! elsewhere each thread's lines are queued whole for the main thread.
    void (*write)(int stream, const char* text, std::size_t size, int kind);
    //! 1 once the user interrupted, else 0; on R's main thread it asks R
    //! first (the main thread is serviced). `consume`, on the main thread:
    //! the interrupt is being reported, so the next call starts afresh.
    int (*interrupted)(int consume);
    //! What R's main thread does while it waits (blockingCallEnds 0:
    //! release output, draw progress, poll the interrupt, run main-thread
    //! calls) or when a blocking call returns (1). Main thread only.
    void (*serviceMainThread)(int blockingCallEnds);
    //! Queues `call` for R's main thread and wakes it. In a process without
    //! a main thread to serve (plain C++) it runs at once.
    void (*postMainCall)(MainCall* call);
    //! Registers (`add` 1) a progress object for the main thread to draw,
    //! or unregisters it (0): once that returns, `draw` is not called again.
    void (*registerProgress)(int add, void* self, DrawFn draw);

    // -- version 3: pools, tasks, futures, groups (handles and task_unit.h) --
    //! A new pool of nWorkers workers (kAutoThreads: defaultThreads()), its handle into `*pool`.
    int (*poolCreate)(std::size_t nWorkers, void** pool, char* message, std::size_t messageSize);
    //! Waits for running tasks, drops queued ones, frees the pool.
    void (*poolDestroy)(void* pool);
    //! The process's global pool (created at first use).
    int (*globalPool)(void** pool, char* message, std::size_t messageSize);
    //! What PoolControl `what` says, with `value` in and `*out` out.
    int (*poolControl)(void* pool, int what, std::size_t value, std::size_t* out, char* message,
                       std::size_t messageSize);
    //! Queues a copy of `task` (its `context` is written first), counted as
    //! `how` (SubmitHow) says. Runs it at once when the pool has no workers.
    int (*submit)(void* pool, int how, void* group, TaskUnit* task, char* message, std::size_t messageSize);
    //! ThreadPool::wait(): for at most timeoutNs (negative: no limit);
    //! `*finished` 0 if the time ran out. kCallbackFailed with the first
    //! task's error in `*error`, to rethrow; kInterrupted.
    int (*poolWait)(void* pool, std::int64_t timeoutNs, int* finished, ErrorBox** error, char* message,
                    std::size_t messageSize);
    //! ThreadPool::parallelFor(): `chunk(self, b, e)` over [begin, end),
    //! returns at once; the pool's wait() ends it. The runtime owns `self`
    //! from the call on and frees it with `destroy(self)` once, when the loop
    //! is done (also when the call fails).
    int (*poolParallelFor)(void* pool, std::ptrdiff_t begin, std::ptrdiff_t end, ChunkFn chunk, void* self,
                           void (*destroy)(void*), std::size_t nBatches, char* message, std::size_t messageSize);
    //! async(async | deferred)'s choice, and TaskGroup::run()'s: nonzero if a
    //! call spawned now, from the stack frame at `frame`, is better run by
    //! its caller than queued; why (CallerRuns): kCallerRunsByRule, or
    //! kCallerRunsInline (earlier runtimes say 1 for both).
    int (*prefersCallerRuns)(void* pool, const void* frame);
    //! A result is ready (`core->ready` set just before): wakes its waiters.
    void (*futureCompleted)(FutureCore* core);
    //! get()'s join on a worker: if the task that computes `core` (a task of
    //! op `kind`) is on top of the calling worker's deque (under tasks it
    //! pushed later, which it runs first), runs it for the getter (sets
    //! `core->forGetter`: the result is kept, not published) and returns 1;
    //! else 0 (wait with futureWait).
    int (*futureJoinOwn)(FutureCore* core, TaskOp kind);
    //! Waits (helping, or servicing R) for `core->ready`, for at most
    //! timeoutNs (negative: no limit); `*ready` says if it is. On R's main
    //! thread the user's interrupt ends the wait (kInterrupted, unless
    //! kWaitQuiet). WaitFlags in `flags`.
    int (*futureWait)(FutureCore* core, std::int64_t timeoutNs, int flags, int* ready, char* message,
                      std::size_t messageSize);
    //! Nobody will take the result: a task not started is skipped; a running
    //! one is waited for.
    void (*futureAbandon)(FutureCore* core);
    //! TaskGroup::wait() on the group in `storage` (a GroupStorage: null
    //! while no task was run); closes it (null again).
    int (*groupWait)(void* storage, ErrorBox** error, char* message, std::size_t messageSize);
    //! TaskGroup::cancel() (opens the group on `pool` if it is closed).
    int (*groupCancel)(void* storage, void* pool, char* message, std::size_t messageSize);
    //! TaskGroup::isCancelled().
    int (*groupCancelled)(void* storage);
    //! TaskGroup's destructor: waits for the group's tasks, closes it.
    void (*groupClose)(void* storage);
    //! The calling thread's worker index in the pool it serves, or -1.
    std::ptrdiff_t (*currentWorkerIndex)();
    //! A blocking call of the client ends (Thread::join()): on R's main
    //! thread, releases output and reports (kInterrupted) and clears the
    //! user's interrupt.
    int (*endBlockingCall)(char* message, std::size_t messageSize);
    //! The runtime's interrupt flag, a std::atomic<bool>: true from the
    //! user's interrupt until it is reported on R's main thread. A client
    //! reads it where isInterrupted() is asked off the main thread (a load,
    //! no call) and in its tasks.
    void* (*interruptFlag)();
    //! The message of the calling thread's last call that failed having been
    //! given no buffer (`message` null; every entry of version 3 allows it,
    //! so that hot calls keep no buffer in their callers' frames).
    void (*lastMessage)(char* message, std::size_t messageSize);

    // -- version 4: the timeline (RcppSpool::TraceZone) --
    //! A zone begins: the runtime's clock in nanoseconds if a timeline is
    //! being recorded, else 0 (then the zone costs nothing more).
    std::int64_t (*traceZoneBegin)();
    //! The zone that began at `start` (nonzero) ends on the calling thread:
    //! a span named `name` (copied, cut to 31 bytes) in the recording.
    void (*traceZoneEnd)(const char* name, std::int64_t start);

    // -- version 5: a spawn in one call, a join that leaves the task to its getter --
    //! submit(pool, kSubmitResult, nullptr, task, nullptr, 0): one call of
    //! the runtime a spawn (submit() dispatches on `how`, then calls the
    //! scheduler: two through the table).
    int (*futureSubmit)(void* pool, TaskUnit* task);
    //! futureJoinOwn() for a getter that runs the task itself: if the task
    //! that computes `core` (op `kind`) is on top of the calling worker's
    //! deque, takes it off, not run, and returns kTakenBack with `*storage`
    //! its record's storage, in the deque, unchanged until the calling
    //! thread queues a task again: the getter owns the task and both of the
    //! state's references, and runs or drops the call itself. A task it
    //! reaches only after running others pushed later, or one the runtime
    //! counts as it runs (one counted in a context), it runs for the getter
    //! instead, as futureJoinOwn() does: kRunForGetter. Else kNotTaken
    //! (wait with futureWait).
    int (*futureTakeBack)(FutureCore* core, TaskOp kind, const unsigned char** storage);
};

//! What ApiTable::futureTakeBack did.
enum TakeBack : int {
    kNotTaken = 0,      //!< not on the caller's deque (stolen, done, or not a worker): wait
    kTakenBack = 1,     //!< taken off, not run: the getter's to run
    kRunForGetter = 2,  //!< run for the getter (`forGetter` set): the result is in the state
};

//! Why ApiTable::prefersCallerRuns says the caller should run a call.
enum CallerRuns : int {
    kCallerQueues = 0,      //!< queue it
    kCallerRunsByRule = 1,  //!< a worker of the pool whose thieves have other work (Scheduler::callerRuns())
    kCallerRunsInline = 2,  //!< every task runs on its caller (a pool without workers, or in a forked child)
};

//! The version of the table these headers know. Version 6 adds no entry:
//! a group's storage became one word (GroupStorage), which a runtime of
//! version 5 would overrun.
constexpr std::uint32_t kApiVersion = 6;

}  // namespace table
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
