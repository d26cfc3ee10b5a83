// A unit of work for the scheduler: a type-erased callable in 64 bytes.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

class Context;

//! A type-erased, move-only callable of fixed size (64 bytes).
//!
//! Closures that are trivially copyable and at most 48 bytes (lambdas that
//! capture references, pointers and numbers: the common case) live inline, so
//! pushing them allocates nothing. Larger or non-trivial closures live on the
//! heap. Because inline closures are trivially copyable, a Task can be copied
//! bytewise into a deque slot made of atomic words (see TaskSlot): a thief may
//! read a slot while its owner overwrites it, which would otherwise be a race.
class Task {
    enum class Op { run, discard };
    using OpFn = void (*)(Op, unsigned char*);

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
        t.ctx_ = ctx;
        if constexpr (fitsInline<Fn>()) {
            ::new (static_cast<void*>(t.storage_)) Fn(std::forward<F>(f));
            t.op_ = &inlineOp<Fn>;
        } else {
            Fn* p = new Fn(std::forward<F>(f));
            std::memcpy(t.storage_, &p, sizeof(p));
            t.op_ = &heapOp<Fn>;
        }
        return t;
    }

    //! Runs the callable and releases it (also if it throws).
    void run() { op_(Op::run, storage_); }
    //! Releases the callable without running it.
    void discard() noexcept { op_(Op::discard, storage_); }

    Context* context() const noexcept { return ctx_; }
    explicit operator bool() const noexcept { return op_ != nullptr; }

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
    //! that computes its result: see FutureState::popOwnTask()).
    bool holds(Kind k, const void* first) const noexcept
    {
        if (op_ != k) return false;
        const void* p;
        std::memcpy(&p, storage_, sizeof(p));
        return p == first;
    }

    //! The callable if this task holds an `Fn` inline, else null (an `Fn` made
    //! by another shared library's copy of this header may not be recognised).
    template <class Fn>
    const Fn* inlineAs() const noexcept
    {
        if constexpr (fitsInline<Fn>()) {
            if (op_ == &inlineOp<Fn>) return std::launder(reinterpret_cast<const Fn*>(storage_));
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

    template <class Fn>
    static void inlineOp(Op op, unsigned char* s)
    {
        // Trivially copyable: no destructor to call.
        Fn& f = *std::launder(reinterpret_cast<Fn*>(s));
        if (op == Op::run) {
            f();
        } else if constexpr (HasDiscard<Fn>::value) {
            f.discard();
        }
    }

    template <class Fn>
    static void heapOp(Op op, unsigned char* s)
    {
        Fn* p;
        std::memcpy(&p, s, sizeof(p));
        struct Deleter {
            Fn* p;
            ~Deleter() { delete p; }
        } guard{p};
        if (op == Op::run) {
            (*p)();
        } else if constexpr (HasDiscard<Fn>::value) {
            p->discard();
        }
    }

    OpFn op_ = nullptr;
    Context* ctx_ = nullptr;
    alignas(8) unsigned char storage_[kInlineBytes];

    friend class TaskSlot;
};

static_assert(sizeof(Task) == 64, "Task is meant to fill one cache line");
static_assert(std::is_trivially_copyable<Task>::value, "Task is copied bytewise");

//! One deque slot: a Task stored as atomic words, so that concurrent reads by
//! thieves and writes by the owner are well defined (and visible to TSan).
class TaskSlot {
public:
    void store(const Task& t) noexcept { storeWords(t, Words{}); }
    Task load() const noexcept
    {
        Task t;
        loadWords(t, Words{});
        return t;
    }

private:
    static constexpr std::size_t kWords = sizeof(Task) / sizeof(std::uint64_t);
    using Words = std::make_index_sequence<kWords>;

    // Word by word, unrolled (a loop through a buffer took twice the
    // instructions: a slot is written and read once per task).
    template <std::size_t... I>
    void storeWords(const Task& t, std::index_sequence<I...>) noexcept
    {
        const auto* src = reinterpret_cast<const unsigned char*>(&t);
        (words_[I].store(wordAt(src + I * 8), std::memory_order_relaxed), ...);
    }
    template <std::size_t... I>
    void loadWords(Task& t, std::index_sequence<I...>) const noexcept
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
