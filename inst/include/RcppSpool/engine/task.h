// A unit of work for the scheduler: a type-erased callable in 64 bytes.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "../table/task_unit.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

class Context;

//! What the engine throws for a client's task that failed (its op returned
//! the error boxed: table/task_unit.h): kept as any task's error is, and
//! handed back, box and all, to whoever waits.
class TaskFailed {
public:
    explicit TaskFailed(table::ErrorBox* box) : holder_(std::make_shared<Holder>(box)) {}
    //! The box, for the caller to rethrow (null if taken already).
    table::ErrorBox* take() const noexcept { return holder_->box.exchange(nullptr); }

private:
    struct Holder {
        explicit Holder(table::ErrorBox* b) : box(b) {}
        ~Holder()
        {
            if (table::ErrorBox* b = box.load()) b->destroy(b);
        }
        std::atomic<table::ErrorBox*> box;
    };
    std::shared_ptr<Holder> holder_;  // exceptions are copied: one box for all copies
};

//! A type-erased, move-only callable of fixed size (64 bytes).
//!
//! Closures that are trivially copyable and at most 48 bytes (lambdas that
//! capture references, pointers and numbers: the common case) live inline, so
//! pushing them allocates nothing. Larger or non-trivial closures live on the
//! heap. Because inline closures are trivially copyable, a Task can be copied
//! bytewise into a deque slot made of atomic words (see TaskSlot): a thief may
//! read a slot while its owner overwrites it, which would otherwise be a race.
//! Its layout is the table's TaskUnit (table/task_unit.h): a client's task
//! is copied in as it is, its op the client's code.
class Task {
    using OpFn = table::TaskOp;

public:
    static constexpr std::size_t kInlineBytes = 48;

    Task() noexcept = default;

    //! Wraps `f` (called with no arguments). `ctx` is the Context that counts
    //! this task (may be null for internal tasks that account for themselves).
    template <class F>
    static Task make(F&& f, Context* ctx)
    {
        using Fn = std::decay_t<F>;
        Task t;
        t.u_.context = ctx;
        if constexpr (fitsInline<Fn>()) {
            ::new (static_cast<void*>(t.u_.storage)) Fn(std::forward<F>(f));
            t.u_.op = &inlineOp<Fn>;
        } else {
            Fn* p = new Fn(std::forward<F>(f));
            std::memcpy(t.u_.storage, &p, sizeof(p));
            t.u_.op = &heapOp<Fn>;
        }
        return t;
    }

    //! A client's task, as it came through the table, counted in `ctx`: the
    //! record itself, not a copy (a Task is a TaskUnit and nothing more).
    static const Task& of(table::TaskUnit& u, Context* ctx) noexcept
    {
        u.context = ctx;
        return *std::launder(reinterpret_cast<const Task*>(&u));
    }

    //! Runs the callable and releases it (also if it throws); a client's
    //! task that failed throws TaskFailed. Always inline: with a second
    //! caller (the timeline's Scheduler::runRecorded) g++ made it a call of
    //! its own on every spawn's path (+8 instructions an async()).
    [[gnu::always_inline]] void run()
    {
        if (table::ErrorBox* e = u_.op(table::kTaskRun, u_.storage)) failed(e);
    }
    //! Releases the callable without running it.
    void discard() noexcept { u_.op(table::kTaskDiscard, u_.storage); }

    Context* context() const noexcept { return static_cast<Context*>(u_.context); }
    explicit operator bool() const noexcept { return u_.op != nullptr; }

    //! What kind of task a Task is: tasks made (by this copy of the header)
    //! from callables of one type, held inline, are of one kind.
    using Kind = OpFn;

    //! The kind of a task made from an `Fn` held inline, or null if an `Fn`
    //! is not held inline.
    template <class Fn>
    static constexpr Kind inlineKind() noexcept
    {
        if constexpr (fitsInline<Fn>())
            return &inlineOp<Fn>;
        else
            return nullptr;
    }

    //! True if this task is of kind `k` (not null) and its callable starts
    //! with the pointer `first` (how a Future's get() recognises the task
    //! that computes its result: see ApiTable::futureJoinOwn).
    bool holds(Kind k, const void* first) const noexcept
    {
        if (u_.op != k) return false;
        const void* p;
        std::memcpy(&p, u_.storage, sizeof(p));
        return p == first;
    }

    //! The callable if this task holds an `Fn` inline, else null (an `Fn` made
    //! by another shared library's copy of this header may not be recognised).
    template <class Fn>
    const Fn* inlineAs() const noexcept
    {
        if constexpr (fitsInline<Fn>()) {
            if (u_.op == &inlineOp<Fn>) return std::launder(reinterpret_cast<const Fn*>(u_.storage));
        }
        return nullptr;
    }

private:
    template <class Fn>
    static constexpr bool fitsInline()
    {
        return sizeof(Fn) <= kInlineBytes && alignof(Fn) <= alignof(std::max_align_t) &&
               alignof(Fn) <= 8 && std::is_trivially_copyable<Fn>::value;
    }

    // A closure may offer `discard()`: called instead of running it when the
    // task is dropped (a future then reports the cancellation, a loop ticket
    // releases its loop).
    template <class Fn, class = void>
    struct HasDiscard : std::false_type {};
    template <class Fn>
    struct HasDiscard<Fn, std::void_t<decltype(std::declval<Fn&>().discard())>> : std::true_type {};

    [[noreturn, gnu::noinline, gnu::cold]] static void failed(table::ErrorBox* e) { throw TaskFailed(e); }

    template <class Fn>
    static table::ErrorBox* inlineOp(int op, unsigned char* s)
    {
        // Trivially copyable: no destructor to call.
        Fn& f = *std::launder(reinterpret_cast<Fn*>(s));
        if (op == table::kTaskRun) {
            f();
        } else if constexpr (HasDiscard<Fn>::value) {
            f.discard();
        }
        return nullptr;
    }

    template <class Fn>
    static table::ErrorBox* heapOp(int op, unsigned char* s)
    {
        Fn* p;
        std::memcpy(&p, s, sizeof(p));
        struct Deleter {
            Fn* p;
            ~Deleter() { delete p; }
        } guard{p};
        if (op == table::kTaskRun) {
            (*p)();
        } else if constexpr (HasDiscard<Fn>::value) {
            p->discard();
        }
        return nullptr;
    }

    // The contract's record itself (not a copy of its fields), so that a
    // client's TaskUnit is used in place: see Task::of().
    table::TaskUnit u_;

    friend class TaskSlot;
};

static_assert(sizeof(Task) == 64, "Task is meant to fill one cache line");
static_assert(sizeof(Task) == sizeof(table::TaskUnit) && alignof(Task) == alignof(table::TaskUnit),
              "Task is a TaskUnit");
static_assert(std::is_trivially_copyable<Task>::value, "Task is copied bytewise");

//! One deque slot: a Task stored as atomic words, so that concurrent reads by
//! thieves and writes by the owner are well defined (and visible to TSan).
class TaskSlot {
public:
    // Always inline, down to the words: every push and pop copies a slot,
    // and as calls (as g++ left them once the deque's push and pop were
    // inlined) they cost 8 instructions a spawn more.
    [[gnu::always_inline]] void store(const Task& t) noexcept { storeWords(t, Words{}); }
    //! The storage's bytes as stored (for the owner of the slot, which alone
    //! writes it: see ApiTable::futureTakeBack).
    const unsigned char* storage() const noexcept { return reinterpret_cast<const unsigned char*>(&words_[2]); }
    [[gnu::always_inline]] Task load() const noexcept
    {
        Task t;
        loadWords(t, Words{});
        return t;
    }
    //! The first kHeadWords words into `t`: its op, its context and the
    //! first word of its storage, enough to tell which task it is
    //! (Task::holds()); loadTail() reads the rest.
    [[gnu::always_inline]] void loadHead(Task& t) const noexcept { loadWords(t, std::make_index_sequence<kHeadWords>{}); }
    //! The words loadHead() left, into `t`.
    [[gnu::always_inline]] void loadTail(Task& t) const noexcept { loadTailWords(t, Words{}); }

private:
    static constexpr std::size_t kHeadWords = 3;
    template <std::size_t... I>
    [[gnu::always_inline]] void loadTailWords(Task& t, std::index_sequence<I...>) const noexcept
    {
        auto* dst = reinterpret_cast<unsigned char*>(&t);
        ((I >= kHeadWords ? putWord(dst + I * 8, words_[I].load(std::memory_order_relaxed)) : void()), ...);
    }

    static constexpr std::size_t kWords = sizeof(Task) / sizeof(std::uint64_t);
    using Words = std::make_index_sequence<kWords>;

    // Word by word, unrolled (a loop through a buffer took twice the
    // instructions: a slot is written and read once per task).
    template <std::size_t... I>
    [[gnu::always_inline]] void storeWords(const Task& t, std::index_sequence<I...>) noexcept
    {
        const auto* src = reinterpret_cast<const unsigned char*>(&t);
        (words_[I].store(wordAt(src + I * 8), std::memory_order_relaxed), ...);
    }
    template <std::size_t... I>
    [[gnu::always_inline]] void loadWords(Task& t, std::index_sequence<I...>) const noexcept
    {
        auto* dst = reinterpret_cast<unsigned char*>(&t);
        (putWord(dst + I * 8, words_[I].load(std::memory_order_relaxed)), ...);
    }
    static std::uint64_t wordAt(const unsigned char* p) noexcept
    {
        std::uint64_t w;
        std::memcpy(&w, p, sizeof(w));
        return w;
    }
    static void putWord(unsigned char* p, std::uint64_t w) noexcept { std::memcpy(p, &w, sizeof(w)); }

    std::atomic<std::uint64_t> words_[kWords];
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
