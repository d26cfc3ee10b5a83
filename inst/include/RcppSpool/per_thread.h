// Per-thread state: the current thread's index, and one value per thread.
#pragma once

#include "abi.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "client/api.h"
#if defined(RCPPSPOOL_RUNTIME_HERE)
#include "runtime/task_entries.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! The current thread's place among the threads that run RcppSpool work, as
//! TBB's this_task_arena::current_thread_index() or OpenMP's
//! omp_get_thread_num(): 0 on a thread that is no pool's worker (R's main
//! thread, the caller of a blocking loop, a Thread), k + 1 on worker k of a
//! pool. A worker keeps its index while its pool lives (setNumThreads()
//! starts new workers). In a package whose pool borrows RcppSpool's workers
//! (built against headers of another ABI version: see
//! engine/thread_lender.h), a thread has the index of the worker slot it
//! serves for the while, which no other thread has at the same time; later
//! it may serve another.
//!
//! A blocking parallelFor() or parallelReduce() on the global pool, called
//! from one thread that is not a worker, runs on threads whose indices lie in
//! [0, ThreadPool::globalInstance().getNumThreads()]: an array of
//! getNumThreads() + 1 scratch buffers gives each thread its own. Two threads
//! share an index when two non-workers run loops at the same time (both 0),
//! or a worker of a private ThreadPool takes part in a loop of the global
//! pool (its index is the one it has in its own pool). PerThread has no such
//! limits.
inline std::size_t thisThreadIndex()
{
    return static_cast<std::size_t>(RCPPSPOOL_API(currentWorkerIndex)() + 1);
}

//! One value of type T per thread, created when the thread first asks for
//! it: scratch buffers and accumulators for parallel loops (as TBB's
//! enumerable_thread_specific or combinable).
//!
//!     RcppSpool::PerThread<std::vector<long>> counts(std::vector<long>(nBins));
//!     RcppSpool::parallelFor(0, n, [&](std::ptrdiff_t b, std::ptrdiff_t e) {
//!         auto& mine = counts.local();          // this thread's histogram
//!         for (std::ptrdiff_t i = b; i < e; ++i) ++mine[bin(x[i])];
//!     });
//!     std::vector<long> total(nBins);
//!     counts.forEach([&](const std::vector<long>& c) {
//!         for (std::size_t k = 0; k < nBins; ++k) total[k] += c[k];
//!     });
//!
//! local() may be called from any number of threads at once and costs a
//! hash lookup (call it once per chunk, not once per element); each value
//! sits in cache lines of its own, so threads updating their values do not
//! slow each other down. forEach(), combine(), size() and clear() must not
//! run while another thread calls local() (call them after the loop).
//! Which thread made which value is not kept: values are visited in no
//! particular order, and combine() of floating-point sums may differ in the
//! last bits from run to run (parallelReduce() is bitwise reproducible). A
//! thread that has ended may leave its value to a thread started later.
template <class T>
class PerThread {
public:
    //! Each thread's value starts as T().
    PerThread() : init_([] { return T(); }) {}
    //! Each thread's value starts as a copy of `exemplar`.
    explicit PerThread(const T& exemplar) : init_([exemplar] { return exemplar; }) {}
    //! Each thread's value starts as `init()`.
    template <class Init, class = std::enable_if_t<std::is_invocable_r_v<T, Init&> &&
                                                   !std::is_same_v<std::decay_t<Init>, T>>>
    explicit PerThread(Init init) : init_(std::move(init))
    {}

    PerThread(const PerThread&) = delete;
    PerThread& operator=(const PerThread&) = delete;
    //! Destroys every thread's value (no thread may use them any longer).
    ~PerThread() { clear(); }

    //! The calling thread's value, made on its first call (if making it
    //! throws, the exception propagates and the next call tries again).
    T& local()
    {
        const void* me = threadKey();
        for (Segment* s = &first_;; s = nextSegment(s)) {
            const std::size_t mask = s->capacity - 1;
            for (std::size_t k = 0, i = hash(me) & mask; k < s->capacity; ++k, i = (i + 1) & mask) {
                Slot& slot = s->slots[i];
                const void* owner = slot.owner.load(std::memory_order_acquire);
                if (owner == nullptr &&
                    slot.owner.compare_exchange_strong(owner, me, std::memory_order_acq_rel))
                    owner = me;
                if (owner != me) continue;
                if (Padded* v = slot.value.load(std::memory_order_relaxed)) return v->value;
                auto* made = new Padded{init_()};
                slot.value.store(made, std::memory_order_release);
                size_.fetch_add(1, std::memory_order_relaxed);
                return made->value;
            }
        }
    }

    //! Calls `f(value)` for each thread's value (T& or const T&).
    template <class F>
    void forEach(F&& f)
    {
        for (Segment* s = &first_; s; s = s->next.load(std::memory_order_acquire))
            for (std::size_t i = 0; i < s->capacity; ++i)
                if (Padded* v = s->slots[i].value.load(std::memory_order_acquire)) f(v->value);
    }
    template <class F>
    void forEach(F&& f) const
    {
        const_cast<PerThread*>(this)->forEach([&](const T& v) { f(v); });
    }

    //! Folds the values with `combine(a, b) -> T`; with no value, a new
    //! thread's starting value.
    template <class Combine>
    T combine(Combine&& combine) const
    {
        std::optional<T> acc;
        forEach([&](const T& v) {
            if (acc) acc.emplace(combine(std::move(*acc), v));
            else acc.emplace(v);
        });
        return acc ? std::move(*acc) : init_();
    }

    //! How many threads have a value.
    std::size_t size() const { return size_.load(std::memory_order_relaxed); }

    //! Drops every value: threads that call local() afterwards start anew.
    void clear()
    {
        for (Segment* s = &first_; s; s = s->next.load(std::memory_order_acquire)) {
            for (std::size_t i = 0; i < s->capacity; ++i) {
                delete s->slots[i].value.exchange(nullptr, std::memory_order_acq_rel);
                s->slots[i].owner.store(nullptr, std::memory_order_relaxed);
            }
        }
        size_.store(0, std::memory_order_relaxed);
    }

private:
    //! A value alone in its cache lines (no false sharing between threads).
    struct alignas(64) Padded {
        T value;
    };
    struct Slot {
        std::atomic<const void*> owner{nullptr};  // the thread's key, once claimed
        std::atomic<Padded*> value{nullptr};      // set by the owner only
    };
    //! An open-addressing table of slots; when one is full, the next (twice
    //! as large) is added. Tables are only added while the object lives, so
    //! a slot never moves and local() takes no lock.
    struct Segment {
        explicit Segment(std::size_t n) : capacity(n), slots(new Slot[n]) {}
        ~Segment() { delete next.load(std::memory_order_relaxed); }
        const std::size_t capacity;  // a power of two
        std::unique_ptr<Slot[]> slots;
        std::atomic<Segment*> next{nullptr};
    };

    //! The next table after `s`, added if there is none yet.
    static Segment* nextSegment(Segment* s)
    {
        Segment* n = s->next.load(std::memory_order_acquire);
        if (n) return n;
        auto fresh = std::make_unique<Segment>(s->capacity * 2);
        if (s->next.compare_exchange_strong(n, fresh.get(), std::memory_order_acq_rel)) return fresh.release();
        return n;  // another thread added one
    }

    //! Identifies the calling thread among live threads: the address of a
    //! thread-local object.
    RCPPSPOOL_HIDDEN static const void* threadKey() noexcept
    {
        static thread_local const char key = 0;
        return &key;
    }
    static std::size_t hash(const void* p) noexcept
    {
        auto x = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9ull;
        return static_cast<std::size_t>(x ^ (x >> 32));
    }

    std::function<T()> init_;
    Segment first_{32};
    std::atomic<std::size_t> size_{0};
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
