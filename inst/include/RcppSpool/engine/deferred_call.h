// DeferredCall<T>: a call kept in place, without allocation, until its result is asked for.
#pragma once

#include "../abi.h"

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! Asks a Future to keep its work in place (see DeferredCall).
struct DeferTag {
};
constexpr DeferTag deferTag{};

//! A callable with result T stored inside the object (no heap), run at most
//! once by run(). This is how a Future holds the work that async(async |
//! deferred) chose not to queue: a task per call of a tiny function costs
//! tens of nanoseconds, a deferred call a few, so fine-grained recursion
//! keeps about the speed of plain calls. Only callables that fit (`fits`)
//! are kept so; the others are queued as tasks.
template <class T>
class DeferredCall {
public:
    //! Room for the callable: a lambda with a few captures and its arguments.
    static constexpr std::size_t kBytes = 48;
    //! The alignment it gets: a pointer's, not std::max_align_t's (16 on
    //! x86-64), so that a Future is 64 bytes, not 80 (vectors of a million
    //! futures are common; a callable aligned beyond this is queued instead).
    static constexpr std::size_t kAlign = alignof(void*) > alignof(double) ? alignof(void*) : alignof(double);

    //! Whether a callable of type F can be kept in place.
    template <class F>
    static constexpr bool fits = sizeof(F) <= kBytes && alignof(F) <= kAlign &&
                                 std::is_nothrow_move_constructible<F>::value;

    DeferredCall() noexcept = default;

    //! Keeps `f` (moved in) until run() or the end.
    template <class F, class = std::enable_if_t<!std::is_same<std::decay_t<F>, DeferredCall>::value>>
    explicit DeferredCall(F&& f)
    {
        using Fn = std::decay_t<F>;
        static_assert(fits<Fn>, "DeferredCall: the callable does not fit");
        ::new (static_cast<void*>(buffer_)) Fn(std::forward<F>(f));
        ops_ = &kOps<Fn>;
    }

    DeferredCall(DeferredCall&& other) noexcept { take(other); }
    DeferredCall& operator=(DeferredCall&& other) noexcept
    {
        if (this != &other) {
            reset();
            take(other);
        }
        return *this;
    }
    DeferredCall(const DeferredCall&) = delete;
    DeferredCall& operator=(const DeferredCall&) = delete;
    ~DeferredCall() { reset(); }

    //! True while a call is kept (not yet run or dropped).
    explicit operator bool() const noexcept { return ops_ != nullptr; }

    //! Runs the call and returns its result (or lets its exception through);
    //! the callable is destroyed either way. Call only when `*this` is true.
    T run() { return std::exchange(ops_, nullptr)->run(buffer_); }

    //! Drops the call without running it.
    void reset() noexcept
    {
        if (ops_) std::exchange(ops_, nullptr)->destroy(buffer_);
    }

private:
    struct Ops {
        T (*run)(void* callable);
        void (*move)(void* from, void* to) noexcept;  // and destroys `from`
        void (*destroy)(void* callable) noexcept;
    };

    template <class Fn>
    static Fn& object(void* p) noexcept
    {
        return *std::launder(static_cast<Fn*>(p));
    }
    template <class Fn>
    static T runIt(void* p)
    {
        struct Destroy {
            Fn& f;
            ~Destroy() { f.~Fn(); }
        } destroy{object<Fn>(p)};
        return destroy.f();
    }
    template <class Fn>
    static void moveIt(void* from, void* to) noexcept
    {
        ::new (to) Fn(std::move(object<Fn>(from)));
        object<Fn>(from).~Fn();
    }
    template <class Fn>
    static void destroyIt(void* p) noexcept
    {
        object<Fn>(p).~Fn();
    }
    // Hidden: one table per shared object, never merged with another's.
    template <class Fn>
    RCPPSPOOL_HIDDEN static constexpr Ops kOps{&runIt<Fn>, &moveIt<Fn>, &destroyIt<Fn>};

    void take(DeferredCall& other) noexcept
    {
        if (!other.ops_) return;
        other.ops_->move(other.buffer_, buffer_);
        ops_ = std::exchange(other.ops_, nullptr);
    }

    alignas(kAlign) unsigned char buffer_[kBytes];
    const Ops* ops_ = nullptr;
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
