// The runtime's pools, tasks, futures and groups, as clients call them
// (table/api_table.h, version 3; the client side: thread_pool.h,
// future.h, task_group.h).
#pragma once

#include "../abi.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "../table/api_table.h"
#include "../table/task_unit.h"
#include "../cores.h"
#include "../engine/loop.h"
#include "../engine/scheduler.h"
#include "pool.h"
#include "status.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace runtime {

RCPPSPOOL_HIDDEN inline Pool& Pool::global()
{
    struct Global : Pool {
        Global() : Pool(::RcppSpool::defaultThreads()) {}
    };
    static Pool* const pool = engine::runtime::state<Global, engine::runtime::Slot::globalPool>();
    return *pool;
}

namespace task_detail {

inline Pool& poolAt(void* pool) noexcept { return *static_cast<Pool*>(pool); }

//! The deadline `timeoutNs` from now (negative: none).
inline std::chrono::steady_clock::time_point deadlineIn(std::int64_t timeoutNs)
{
    if (timeoutNs < 0) return std::chrono::steady_clock::time_point::max();
    return std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeoutNs);
}

//! A TaskGroup's state, made when the group opens and freed when it closes;
//! the client's storage (table::GroupStorage) holds its address meanwhile.
//! Not in the client's object: its context has a cache line of its own
//! (thieves count its tasks down), and kept there it made every TaskGroup,
//! in every frame of a recursion, 384 bytes (128 now). Its memory is a
//! block of the opening worker's cache (Scheduler::allocateBlock()), as
//! groups open and close at the rate of spawns when a recursion's groups
//! run two tasks each.
struct Group {
    engine::Scheduler* sched;
    void* block;    //!< the allocation that holds it (it is aligned within)
    void* slot;     //!< the client's storage, zeroed when the group closes
    engine::Context ctx;
    Group(engine::Scheduler& s, void* b, void* at)
        : sched(&s), block(b), slot(at), ctx(engine::Scheduler::enclosingContext())
    {}
};
//! Bytes of a group's block: room to align a Group in memory of operator
//! new's alignment (which allocateBlock() gives).
constexpr std::size_t kGroupBlockBytes = sizeof(Group) + alignof(Group) - __STDCPP_DEFAULT_NEW_ALIGNMENT__;
static_assert(engine::BlockCache::classOf(kGroupBlockBytes) < engine::BlockCache::kClasses,
              "a group's block is one a worker's cache keeps");

//! The group in `storage`, or null while it is closed.
inline Group* openGroup(void* storage) noexcept
{
    void* g;
    std::memcpy(&g, storage, sizeof(g));
    return static_cast<Group*>(g);
}
//! A new group in `storage` on `pool` (out of line: once a group).
[[gnu::noinline]] inline Group& makeGroup(void* storage, void* pool)
{
    void* block = engine::Scheduler::allocateBlock(kGroupBlockBytes);
    void* at = block;
    std::size_t space = kGroupBlockBytes;
    std::align(alignof(Group), sizeof(Group), at, space);
    auto* g = ::new (at) Group(poolAt(pool).scheduler(), block, storage);
    std::memcpy(storage, &g, sizeof(g));
    return *g;
}
//! The group in `storage`, opened on `pool` if it was closed.
inline Group& groupOn(void* storage, void* pool)
{
    if (Group* g = openGroup(storage)) return *g;
    return makeGroup(storage, pool);
}
//! Frees the group (its tasks are done) and marks its storage closed.
inline void closeGroup(Group* g) noexcept
{
    void* slot = g->slot;
    void* block = g->block;
    g->~Group();
    engine::Scheduler::freeBlock(block, kGroupBlockBytes);
    const void* closed = nullptr;
    std::memcpy(slot, &closed, sizeof(closed));
}

//! A detached loop's body: the client's chunk function and its object, freed
//! (destroy) with the loop.
struct ClientChunks {
    table::ChunkFn chunk;
    void* self;
    void (*destroy)(void*);
    ClientChunks(table::ChunkFn c, void* s, void (*d)(void*)) noexcept : chunk(c), self(s), destroy(d) {}
    ClientChunks(ClientChunks&& o) noexcept : chunk(o.chunk), self(std::exchange(o.self, nullptr)), destroy(o.destroy)
    {
    }
    ClientChunks(const ClientChunks&) = delete;
    ~ClientChunks()
    {
        if (self) destroy(self);
    }
    void operator()(std::ptrdiff_t b, std::ptrdiff_t e) const
    {
        if (table::ErrorBox* error = chunk(self, b, e)) throw engine::TaskFailed(error);
    }
};

}  // namespace task_detail

//! ApiTable::poolCreate.
inline int poolCreate(std::size_t nWorkers, void** pool, char* message, std::size_t size)
{
    return guarded(message, size, [&] {
        *pool = new Pool(nWorkers == table::kAutoThreads ? ::RcppSpool::defaultThreads() : nWorkers);
    });
}

//! ApiTable::poolDestroy.
inline void poolDestroy(void* pool) { delete static_cast<Pool*>(pool); }

//! ApiTable::globalPool.
inline int globalPool(void** pool, char* message, std::size_t size)
{
    return guarded(message, size, [&] { *pool = &Pool::global(); });
}

//! ApiTable::poolControl.
inline int poolControl(void* pool, int what, std::size_t value, std::size_t* out, char* message, std::size_t size)
{
    return guarded(message, size, [&] {
        Pool& p = task_detail::poolAt(pool);
        engine::Scheduler& s = p.scheduler();
        std::size_t result = 0;
        switch (what) {
        case table::kPoolNumThreads: result = s.numWorkers(); break;
        case table::kPoolSetNumThreads: p.setNumThreads(value); break;
        case table::kPoolPause: s.pause(); break;
        case table::kPoolUnpause: s.unpause(); break;
        case table::kPoolIsPaused: result = s.isPaused(); break;
        case table::kPoolTasksQueued: result = s.tasksQueued(); break;
        case table::kPoolTasksRunning: result = s.tasksRunning(); break;
        case table::kPoolStopWorkers: p.stopWorkers(); break;
        case table::kPoolTasksPushed: result = s.tasksPushed(); break;
        default: throw std::invalid_argument("RcppSpool: unknown pool control " + std::to_string(what));
        }
        if (out) *out = result;
    });
}

namespace task_detail {
//! submit() of work a pool counts (push, pushReturn): restarts workers a
//! join() stopped, may make the running task's children's context.
[[gnu::noinline]] inline int submitCounted(Pool& p, int how, table::TaskUnit* task, char* message,
                                           std::size_t size) noexcept
{
    engine::Scheduler& s = p.scheduler();
    engine::Context* ctx = nullptr;
    const int status = guarded(message, size, [&] {
        p.checkUsable();
        ctx = how == table::kSubmitResult ? s.contextForResultTask() : s.contextForNewWork();
    });
    if (status != table::kOk) return status;
    if (ctx) ctx->add(1);
    s.submit(engine::Task::of(*task, ctx));
    return table::kOk;
}
}  // namespace task_detail

//! ApiTable::futureSubmit. Out of line in a program that compiles the
//! runtime with its client too: one call a spawn, as through the table.
[[gnu::noinline]] inline int futureSubmit(void* pool, table::TaskUnit* task) noexcept
{
    Pool& p = task_detail::poolAt(pool);
    if (!p.stoppedByJoin()) {
        // Counted by the caller's pool from outside it, by nobody from
        // inside (its Future waits for it).
        p.scheduler().submitResult(*task);
        return table::kOk;
    }
    return task_detail::submitCounted(p, table::kSubmitResult, task, nullptr, 0);
}

//! ApiTable::submit. (Scheduler's submits never throw: the common paths
//! need no handler.)
inline int submit(void* pool, int how, void* group, table::TaskUnit* task, char* message, std::size_t size) noexcept
{
    Pool& p = task_detail::poolAt(pool);
    if (how == table::kSubmitToGroup) {
        task_detail::Group* g = task_detail::openGroup(group);
        if (!g) {
            const int status = guarded(message, size, [&] { g = &task_detail::makeGroup(group, pool); });
            if (status != table::kOk) return status;
        }
        g->ctx.add(1);
        p.scheduler().submit(engine::Task::of(*task, &g->ctx));
    } else if (how == table::kSubmitResult) {
        return futureSubmit(pool, task);
    } else {
        return task_detail::submitCounted(p, how, task, message, size);
    }
    return table::kOk;
}

//! ApiTable::poolWait.
inline int poolWait(void* pool, std::int64_t timeoutNs, int* finished, table::ErrorBox** error, char* message,
                    std::size_t size)
{
    *finished = 0;
    return guarded(message, size, error,
                   [&] { *finished = task_detail::poolAt(pool).wait(task_detail::deadlineIn(timeoutNs)); });
}

//! ApiTable::poolParallelFor.
inline int poolParallelFor(void* pool, std::ptrdiff_t begin, std::ptrdiff_t end, table::ChunkFn chunk, void* self,
                           void (*destroy)(void*), std::size_t nBatches, char* message, std::size_t size)
{
    task_detail::ClientChunks body(chunk, self, destroy);  // from here on, self is ours
    return guarded(message, size, [&] {
        Pool& p = task_detail::poolAt(pool);
        engine::Scheduler& s = p.scheduler();
        p.checkUsable();
        if (end <= begin) return;
        engine::Context* owner = s.contextForNewWork();
        owner->add(1);
        engine::DetachedLoop<task_detail::ClientChunks>* loop;
        try {
            loop = new engine::DetachedLoop<task_detail::ClientChunks>(std::move(body), s, begin, end, nBatches, owner);
        } catch (...) {
            s.finish(owner);
            throw;
        }
        loop->invite(false);
        loop->release();
    });
}

//! ApiTable::prefersCallerRuns.
inline int prefersCallerRuns(void* pool, const void* frame)
{
    return task_detail::poolAt(pool).scheduler().callerRuns(frame);
}

//! ApiTable::futureCompleted.
inline void futureCompleted(table::FutureCore* core)
{
    if (core->pool) task_detail::poolAt(core->pool).scheduler().notifyCompletion(core);
}

//! ApiTable::futureJoinOwn.
RCPPSPOOL_NO_STACK_PROTECTOR inline int futureJoinOwn(table::FutureCore* core, table::TaskOp kind)
{
    // (Whether the result is ready is the join's first look.)
    if (!core->pool) return 0;
    engine::Scheduler& s = task_detail::poolAt(core->pool).scheduler();
    engine::Task mine;
    engine::Scheduler::Worker* self = nullptr;
    const auto joined = s.joinOwn([core] { return core->ready.load(std::memory_order_acquire) != 0; },
                                  [core, kind](const engine::Task& t) { return t.holds(kind, core); }, mine, &self);
    if (joined != engine::Scheduler::OwnJoin::mine) return 0;
    core->forGetter = 1;
    s.runTakenBack(mine, self);
    return 1;
}

namespace task_detail {
//! futureTakeBack() of a task not found on top (others, pushed later, ran
//! first: the record was read whole) or counted in a context (queued from
//! outside the pool, then taken by this worker in a batch): run as
//! futureJoinOwn() runs it, for its getter. Out of line: inline, it made
//! every join save every register.
[[gnu::noinline]] inline int runForGetter(engine::Scheduler& s, engine::Task& mine, engine::Scheduler::Worker* self,
                                          table::FutureCore* core) noexcept
{
    core->forGetter = 1;
    s.runTakenBack(mine, self);
    return table::kRunForGetter;
}
}  // namespace task_detail

//! ApiTable::futureTakeBack.
RCPPSPOOL_NO_STACK_PROTECTOR inline int futureTakeBack(table::FutureCore* core, table::TaskOp kind,
                                                       const unsigned char** storage)
{
    if (!core->pool) return table::kNotTaken;
    engine::Scheduler& s = task_detail::poolAt(core->pool).scheduler();
    engine::Task mine;
    engine::Scheduler::Worker* self = nullptr;
    const engine::TaskSlot* slot = nullptr;
    // Only its head is read when it is on top (the getter runs it).
    const auto joined = s.joinOwn<false>([core] { return core->ready.load(std::memory_order_acquire) != 0; },
                                         [core, kind](const engine::Task& t) { return t.holds(kind, core); }, mine,
                                         &self, &slot);
    if (joined != engine::Scheduler::OwnJoin::mine) return table::kNotTaken;
    if (!slot) return task_detail::runForGetter(s, mine, self, core);
    s.noteTakenBack(self);
    *storage = slot->storage();
    return table::kTakenBack;
}

namespace task_detail {
inline void abandonAndWait(table::FutureCore* core, engine::Scheduler* s)
{
    auto ready = [core] { return core->ready.load(std::memory_order_acquire) != 0; };
    if (ready()) return;
    core->abandoned.store(1, std::memory_order_release);
    if (ready() || !s || s->forked()) return;
    s->waitUntil(core, ready);
}
}  // namespace task_detail

//! ApiTable::futureWait.
inline int futureWait(table::FutureCore* core, std::int64_t timeoutNs, int flags, int* isReady, char* message,
                      std::size_t size)
{
    *isReady = 0;
    return guarded(message, size, [&] {
        engine::Scheduler* s = core->pool ? &task_detail::poolAt(core->pool).scheduler() : nullptr;
        auto ready = [core] { return core->ready.load(std::memory_order_acquire) != 0; };
        const bool service = s ? s->isServiceThread() : engine::onServiceThread();
        bool done = ready();
        if (!done && s && !s->forked())
            done = s->waitUntilDoneOrInterrupted(service, core, ready, task_detail::deadlineIn(timeoutNs)) && ready();
        if (!done && (flags & table::kWaitAbandon)) task_detail::abandonAndWait(core, s);
        *isReady = done;
        if (service && !(flags & table::kWaitQuiet)) engine::endBlockingCall(nullptr, true);
    });
}

//! ApiTable::futureAbandon.
inline void futureAbandon(table::FutureCore* core)
{
    task_detail::abandonAndWait(core, core->pool ? &task_detail::poolAt(core->pool).scheduler() : nullptr);
}

namespace task_detail {
//! groupWait() past its fast path: a full wait (helping, or servicing R),
//! an error, an interrupt. Closes the group.
[[gnu::noinline]] inline int waitForGroup(Group* g, table::ErrorBox** error, char* message, std::size_t size)
{
    struct Close {
        Group* g;
        ~Close() { closeGroup(g); }
    } close{g};
    engine::Scheduler& s = *g->sched;
    engine::Context& ctx = g->ctx;
    return guarded(message, size, error, [&] {
        const bool service = s.isServiceThread();
        if (!s.forked()) s.waitUntilDoneOrInterrupted(service, &ctx, [&] { return ctx.done(); });
        if (!ctx.done()) {  // interrupted
            ctx.cancel();
            s.waitUntil(&ctx, [&] { return ctx.done(); });
            ctx.takeError();
        }
        // Off the service thread and without an error there is nothing to end
        // (a recursion's common case).
        if (ctx.hasError())
            engine::endBlockingCall(ctx.takeError(), service);
        else if (service)
            engine::endBlockingCall(nullptr, service);
    });
}
}  // namespace task_detail

//! ApiTable::groupWait.
RCPPSPOOL_NO_STACK_PROTECTOR inline int groupWait(void* storage, table::ErrorBox** error, char* message, std::size_t size)
{
    task_detail::Group* g = task_detail::openGroup(storage);
    if (!g) return table::kOk;
    // A recursion's join on a worker: the group's tasks are on top of its
    // own deque; once they are run and none failed, nothing is left to do
    // (the full wait is out of line: this path is one of every spawn's two
    // calls of a TaskGroup recursion).
    engine::Context& ctx = g->ctx;
    if (engine::Task t; g->sched->joinOwn([&] { return ctx.done(); }, [](const engine::Task&) { return false; }, t) ==
                            engine::Scheduler::OwnJoin::done &&
                        !ctx.hasError()) {
        task_detail::closeGroup(g);
        return table::kOk;
    }
    return task_detail::waitForGroup(g, error, message, size);
}

//! ApiTable::groupCancel.
inline int groupCancel(void* storage, void* pool, char* message, std::size_t size)
{
    return guarded(message, size, [&] { task_detail::groupOn(storage, pool).ctx.cancel(); });
}

//! ApiTable::groupCancelled.
inline int groupCancelled(void* storage)
{
    const task_detail::Group* g = task_detail::openGroup(storage);
    return g && g->ctx.cancelled() ? 1 : 0;
}

//! ApiTable::groupClose. Out of line in a program that compiles the runtime
//! with its client too: a TaskGroup's destructor calls it only for a group
//! not waited for, and inline it made a recursion's function too big for
//! its spawn's look (prefersCallerRuns) to be inlined.
[[gnu::noinline]] inline void groupClose(void* storage)
{
    task_detail::Group* g = task_detail::openGroup(storage);
    if (!g) return;
    if (!g->ctx.done() && !g->sched->forked()) g->sched->waitUntil(&g->ctx, [g] { return g->ctx.done(); });
    task_detail::closeGroup(g);
}

//! ApiTable::currentWorkerIndex.
inline std::ptrdiff_t currentWorkerIndex() { return engine::Scheduler::currentWorkerIndex(); }

//! ApiTable::lastMessage.
inline void lastMessage(char* message, std::size_t size) { report(lastMessageBuffer(), message, size); }

//! ApiTable::interruptFlag.
inline void* interruptFlag() { return &engine::interruptFlag(); }

//! ApiTable::endBlockingCall.
inline int endBlockingCall(char* message, std::size_t size)
{
    return guarded(message, size, [] { engine::endBlockingCall(nullptr); });
}

}  // namespace runtime
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
