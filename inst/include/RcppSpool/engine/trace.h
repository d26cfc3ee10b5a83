// Recording what threads do (a timeline): per-thread span buffers, one steady clock.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "fork_guard.h"
#include "host_hooks.h"
#include "runtime.h"
#include "thread_local_object.h"
#if !defined(_WIN32)
#include <pthread.h>
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {
namespace trace {

//! What a span is (the R column `kind`).
enum Kind : std::uint8_t {
    kChunk = 0,  //!< a piece of a parallel loop (adjacent pieces of one loop merged)
    kTask = 1,   //!< a pushed task, an async, a TaskGroup task
    kWait = 2,   //!< a thread blocked in a wait (helping or not)
    kMain = 3,   //!< R's main thread serving output, progress, onMainThread() calls
    kZone = 4,   //!< a user's TraceZone
    kKinds = 5
};

//! The name of a Kind, as R and the JSON show it. (Hidden, as every
//! function here with a static: not merged across shared objects.)
RCPPSPOOL_HIDDEN inline const char* kindName(int k) noexcept
{
    static const char* const names[] = {"chunk", "task", "wait", "main", "zone"};
    return k >= 0 && k < kKinds ? names[k] : "?";
}

//! Bytes of a zone's name kept (with its '\0'): a longer name is cut.
constexpr std::size_t kLabelBytes = 32;
//! Events per block of a thread's buffer: blocks are allocated as needed and never move.
constexpr std::size_t kBlockEvents = 2048;
//! The most events a thread may keep in one recording (the R argument's upper bound).
constexpr std::size_t kMaxEventsPerThread = std::size_t(1) << 21;
//! Pieces of one loop on one thread closer than this are one chunk span
//! (with a count): a long loop cut into 20-us pieces would fill a buffer.
constexpr std::int64_t kMergeGapNs = 2000;

//! Waits and services of the main thread shorter than this are not recorded.
constexpr std::int64_t kMinWaitNs = 2000;

//! Tasks are spans down to this depth of tasks running inside tasks on one
//! thread (a task its thread runs while no task runs there is at depth 0;
//! a loop's pieces do not count). Deeper tasks are counted in the span of
//! their nearest recorded ancestor (its `count`), which covers their time:
//! fine-grained recursion (fib with a task per call) made two clock reads
//! and an event per ~35-ns task, 2.6-2.9x its time while recording.
constexpr int kRecordedTaskDepth = 2;

//! Nanoseconds on the one clock every thread reads.
inline std::int64_t now() noexcept
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

//! One span as its thread wrote it. `end` and `count` are atomics: the
//! owner may extend its last chunk while a collector reads it.
struct Event {
    std::int64_t start;
    std::atomic<std::int64_t> end;
    std::uint64_t id;
    std::atomic<std::uint32_t> count;
    std::uint8_t kind;
    char label[kLabelBytes];
};

//! The events of one thread. Only its thread writes it; a collector reads
//! the first `count` events of buffers whose `session` is its recording's.
struct Buffer {
    std::atomic<std::uint32_t> session{0};
    std::atomic<std::size_t> count{0};
    std::atomic<std::uint64_t> dropped{0};
    std::atomic<bool> inUse{false};  // owned by a live thread
    std::atomic<int> worker{-1};     // the worker index it last ran a task as
    std::uint64_t order = 0;  // when it was made (thread numbers follow it)
    std::unique_ptr<std::atomic<Event*>[]> blocks{new std::atomic<Event*>[kMaxEventsPerThread / kBlockEvents]()};
    ~Buffer()
    {
        for (std::size_t k = 0; k < kMaxEventsPerThread / kBlockEvents; ++k) delete[] blocks[k].load();
    }
    Event& at(std::size_t i) noexcept { return blocks[i / kBlockEvents].load(std::memory_order_relaxed)[i % kBlockEvents]; }
};

//! Every buffer ever made (a thread that ends leaves its buffer for the
//! next thread). In a forked child a new registry replaces it: its mutex may
//! have been held by a thread the child does not have.
struct Registry {
    std::mutex mutex;
    std::vector<std::unique_ptr<Buffer>> buffers;
    std::uint64_t made = 0;
};

//! The process-wide state of recording.
struct State {
    std::atomic<Registry*> registry{nullptr};
    std::atomic<std::uint64_t> nextId{0};  // loop numbers
    std::mutex control;          // start and stop (never in a forked child's way: see onForkChild)
    std::uint32_t last = 0;      // the last recording's number
    std::int64_t startNs = 0;    // when it began
    std::atomic<std::size_t> capacity{0};  // events per thread (a late writer of the last recording may read it)
    const Buffer* starter = nullptr;  // the buffer of the thread that began it (thread 0)
};

RCPPSPOOL_HIDDEN inline State& state() noexcept
{
    static State* const s = runtime::state<State, runtime::Slot::trace>();
    return *s;
}

//! The recording's number while one runs, else 0. A static of its own,
//! trivially destructible and zero-initialized: reaching it needs no guard,
//! so the check that loops and tasks pay while nothing records is one load.
RCPPSPOOL_HIDDEN inline std::atomic<std::uint32_t>& recordingFlag() noexcept
{
    return *runtime::state<std::atomic<std::uint32_t>, runtime::Slot::traceRecording>();
}

//! The hot path's check: one relaxed load. Nonzero while a recording runs.
[[gnu::always_inline]] inline std::uint32_t recording() noexcept
{
    return recordingFlag().load(std::memory_order_relaxed);
}

namespace detail {

inline Registry& registry()
{
    State& s = state();
    Registry* r = s.registry.load(std::memory_order_acquire);
    if (r) return *r;
    auto* fresh = new Registry;
    if (s.registry.compare_exchange_strong(r, fresh, std::memory_order_acq_rel)) return *fresh;
    delete fresh;
    return *r;
}

//! How deep in tasks run while recording the calling thread is
//! (Scheduler::runRecorded): trivially destructible, reached without a
//! guard (it is read at every task while recording).
struct TaskNesting {
    int depth;                //!< tasks running on this thread's stack
    std::uint32_t unrecorded; //!< tasks run deeper than kRecordedTaskDepth, not yet in a span's count
};
RCPPSPOOL_HIDDEN inline TaskNesting& taskNesting() noexcept
{
    static thread_local TaskNesting n{0, 0};
    return n;
}

//! The calling thread's claim on a buffer, given back when the thread ends.
struct Holder {
    Buffer* buffer = nullptr;
    unsigned forkGen = 0;
    ~Holder()
    {
        if (buffer && forkGen == currentForkGeneration()) buffer->inUse.store(false, std::memory_order_release);
    }
};

//! The calling thread's buffer (made or reused at its first span).
inline Buffer* mine()
{
    Holder* h = runtime::threadState<Holder, runtime::ThreadSlot::trace>();
    const unsigned gen = currentForkGeneration();
    if (h->buffer && h->forkGen == gen) return h->buffer;
    Registry& r = registry();
    std::lock_guard<std::mutex> lk(r.mutex);
    const std::uint32_t now = recordingFlag().load(std::memory_order_relaxed);
    Buffer* b = nullptr;
    // A free buffer that holds nothing of this recording.
    for (auto& x : r.buffers)
        if (!x->inUse.load(std::memory_order_acquire) && x->session.load(std::memory_order_relaxed) != now) {
            b = x.get();
            break;
        }
    if (!b) {
        r.buffers.emplace_back(new Buffer);
        b = r.buffers.back().get();
    }
    b->inUse.store(true, std::memory_order_relaxed);
    b->order = ++r.made;
    b->worker.store(-1, std::memory_order_relaxed);
    h->buffer = b;
    h->forkGen = gen;
    return b;
}

//! In a forked child: no recording, and a registry of its own. (The
//! parent's buffers are the child's copies: nothing the child does reaches
//! the parent's.)
inline void onForkChild() noexcept
{
    State& s = state();
    recordingFlag().store(0, std::memory_order_relaxed);
    s.registry.store(nullptr, std::memory_order_relaxed);  // the old one leaks in the child
    ::new (&s.control) std::mutex;  // it may have been held by a thread the child lacks
}

RCPPSPOOL_HIDDEN inline void watchForks() noexcept
{
#if !defined(_WIN32)
    static const bool registered = (pthread_atfork(nullptr, nullptr, &onForkChild), true);
    (void)registered;
#endif
}

}  // namespace detail

//! Records [start, now) of `kind` for `id` on the calling thread, standing
//! for `count` tasks (a task span and its unrecorded descendants). Called
//! only while recording (after recording() said so), out of line. A span
//! that ends after its recording stopped is left out.
[[gnu::noinline]] inline void record(int kind, std::uint64_t id, std::int64_t start, const char* label = nullptr,
                                     int worker = -1, std::uint32_t count = 1) noexcept
{
    const std::int64_t end = now();
    // A wait that ended at once, or a service of R's main thread that found
    // nothing to do, is no span worth a place.
    if ((kind == kWait || kind == kMain) && end - start < kMinWaitNs) return;
    State& st = state();
    const std::uint32_t session = recordingFlag().load(std::memory_order_acquire);
    if (session == 0) return;
    Buffer* b;
    try {
        b = detail::mine();
    } catch (...) {
        return;
    }
    if (b->session.load(std::memory_order_relaxed) != session) {
        // The first span of this recording on this thread: start afresh.
        b->count.store(0, std::memory_order_relaxed);
        b->dropped.store(0, std::memory_order_relaxed);
        b->session.store(session, std::memory_order_release);
    }
    if (worker >= 0) b->worker.store(worker, std::memory_order_relaxed);
    const std::size_t n = b->count.load(std::memory_order_relaxed);
    if (kind == kChunk && n > 0) {
        Event& last = b->at(n - 1);
        if (last.kind == kChunk && last.id == id && start - last.end.load(std::memory_order_relaxed) < kMergeGapNs) {
            last.end.store(end, std::memory_order_relaxed);
            last.count.store(last.count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
            return;
        }
    }
    if (n >= st.capacity.load(std::memory_order_relaxed)) {
        b->dropped.store(b->dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return;
    }
    std::atomic<Event*>& block = b->blocks[n / kBlockEvents];
    if (!block.load(std::memory_order_relaxed)) {
        Event* fresh = new (std::nothrow) Event[kBlockEvents];
        if (!fresh) {
            b->dropped.store(b->dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
            return;
        }
        block.store(fresh, std::memory_order_relaxed);  // published by count's release below
    }
    Event& e = b->at(n);
    e.start = start;
    e.end.store(end, std::memory_order_relaxed);
    e.id = id;
    e.count.store(count, std::memory_order_relaxed);
    e.kind = static_cast<std::uint8_t>(kind);
    e.label[0] = '\0';
    if (label) {
        std::strncpy(e.label, label, kLabelBytes - 1);
        e.label[kLabelBytes - 1] = '\0';
    }
    b->count.store(n + 1, std::memory_order_release);
}

//! Says that the calling thread is worker `worker` (while recording).
[[gnu::noinline]] inline void noteWorker(int worker) noexcept
{
    if (worker < 0 || !recordingFlag().load(std::memory_order_relaxed)) return;
    try {
        detail::mine()->worker.store(worker, std::memory_order_relaxed);
    } catch (...) {
    }
}

//! A loop's number for its spans while recording, else 0 (one load).
[[gnu::always_inline]] inline std::uint64_t loopId() noexcept
{
    if (!recording()) return 0;
    return state().nextId.fetch_add(1, std::memory_order_relaxed) + 1;
}

//! A span from construction to destruction, if recording when made.
class Span {
public:
    Span(int kind, const void* id, const char* label = nullptr) noexcept
        : start_(recording() ? now() : 0), id_(reinterpret_cast<std::uintptr_t>(id)), label_(label), kind_(kind)
    {}
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;
    ~Span()
    {
        if (start_) record(kind_, id_, start_, label_);
    }

private:
    std::int64_t start_;
    std::uint64_t id_;
    const char* label_;
    int kind_;
};

//! One span of a finished recording, in seconds since it began.
struct Spanned {
    int thread;         //!< 0: R's main thread (or the recording's starter), then 1, 2, ...
    int kind;           //!< a Kind
    double start, end;  //!< seconds since the recording began
    std::uint64_t id;   //!< the loop, pool or group (numbered from 1 in order of appearance)
    std::uint32_t count;  //!< pieces merged into a chunk span; a task span's task and its unrecorded descendants (see kRecordedTaskDepth); 1 otherwise
    std::string label;  //!< a zone's name, else empty
};

//! A finished recording.
struct Recording {
    std::vector<Spanned> spans;             //!< sorted by thread, then start
    std::vector<std::string> threadNames;   //!< by thread number
    double seconds = 0;                     //!< from start to stop
    std::uint64_t dropped = 0;              //!< events that did not fit their thread's buffer
};

//! Why start() or stop() refused.
enum class Refusal { none, running, notRunning, forked };

//! Starts recording, at most `capacity` events a thread.
inline Refusal start(std::size_t capacity)
{
    detail::watchForks();
    State& s = state();
    std::lock_guard<std::mutex> lk(s.control);
    if (recordingFlag().load(std::memory_order_relaxed)) return Refusal::running;
    s.capacity.store(std::max<std::size_t>(1, std::min(capacity, kMaxEventsPerThread)), std::memory_order_relaxed);
    try {
        s.starter = detail::mine();
    } catch (...) {
        s.starter = nullptr;
    }
    s.startNs = now();
    s.last = s.last + 1 == 0 ? 1 : s.last + 1;
    recordingFlag().store(s.last, std::memory_order_release);
    return Refusal::none;
}

//! Stops recording and collects what every thread recorded into `out`.
inline Refusal stop(Recording& out)
{
    State& s = state();
    std::lock_guard<std::mutex> lk(s.control);
    const std::uint32_t session = recordingFlag().load(std::memory_order_relaxed);
    if (!session) return Refusal::notRunning;
    const std::int64_t stopNs = now();
    recordingFlag().store(0, std::memory_order_release);
    out = Recording{};
    out.seconds = static_cast<double>(stopNs - s.startNs) * 1e-9;
    struct Raw {
        const Buffer* b;
        std::vector<Spanned> spans;
    };
    std::vector<Raw> raws;
    {
        Registry& r = detail::registry();
        std::lock_guard<std::mutex> rl(r.mutex);
        for (auto& b : r.buffers) {
            if (b->session.load(std::memory_order_acquire) != session) continue;
            Raw raw{b.get(), {}};
            const std::size_t n = b->count.load(std::memory_order_acquire);
            out.dropped += b->dropped.load(std::memory_order_relaxed);
            for (std::size_t i = 0; i < n; ++i) {
                Event& e = b->at(i);
                const std::int64_t end = std::min(e.end.load(std::memory_order_relaxed), stopNs);
                if (e.start < s.startNs || end < e.start) continue;  // began before this recording
                raw.spans.push_back(Spanned{0, e.kind, static_cast<double>(e.start - s.startNs) * 1e-9,
                                            static_cast<double>(end - s.startNs) * 1e-9, e.id,
                                            e.count.load(std::memory_order_relaxed), e.label});
            }
            if (!raw.spans.empty()) raws.push_back(std::move(raw));
        }
    }
    // Thread 0 is the thread that began the recording (R's main thread);
    // then workers by index, then other threads in the order their buffers
    // were made.
    const Buffer* starter = s.starter;
    std::stable_sort(raws.begin(), raws.end(), [starter](const Raw& a, const Raw& b) {
        auto key = [starter](const Raw& r) {
            const int w = r.b->worker.load(std::memory_order_relaxed);
            return std::make_pair(r.b == starter ? 0 : w >= 0 ? 1 : 2,
                                  w >= 0 ? static_cast<std::uint64_t>(w) : r.b->order);
        };
        return key(a) < key(b);
    });
    const bool haveMain = !raws.empty() && raws[0].b == starter;
    const char* mainName = hostHooks().isServiceThread ? "R main thread" : "main thread";
    if (!haveMain) out.threadNames.push_back(mainName);
    std::unordered_map<std::uint64_t, std::uint64_t> ids;  // raw id -> number, by first use
    for (std::size_t t = 0; t < raws.size(); ++t) {
        const int thread = static_cast<int>(t) + (haveMain ? 0 : 1);
        const int w = raws[t].b->worker.load(std::memory_order_relaxed);
        out.threadNames.push_back(thread == 0 ? mainName
                                  : w >= 0    ? "worker " + std::to_string(w + 1)
                                              : "thread " + std::to_string(thread));
        std::sort(raws[t].spans.begin(), raws[t].spans.end(),
                  [](const Spanned& a, const Spanned& b) { return a.start < b.start; });
        for (Spanned& sp : raws[t].spans) {
            sp.thread = thread;
            if (sp.id) {
                // Small numbers for ids (loop numbers and addresses alike), in order of appearance.
                const std::uint64_t raw = sp.id * kKinds + static_cast<std::uint64_t>(sp.kind == kChunk);
                sp.id = ids.emplace(raw, ids.size() + 1).first->second;
            }
            out.spans.push_back(std::move(sp));
        }
    }
    return Refusal::none;
}

//! True while a recording runs (in this process: a forked child has none).
inline bool running() noexcept { return recording() != 0; }

}  // namespace trace
}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
