// One object per thread, destroyed when the thread ends, on every toolchain.
#pragma once

#include "../abi.h"

#include <type_traits>
#if defined(__MINGW32__)
#include <pthread.h>
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {
namespace runtime {

//! The calling thread's own T (one per Tag), value-initialized at its first
//! use and destroyed when the thread ends: a thread_local, except where the
//! toolchain destroys thread_locals wrongly. mingw-w64's GCC keeps them in
//! emulated TLS, whose storage a thread's exit frees before it runs the
//! destructors of the objects in it (GCC bug 80816, mingw-w64 bug 527): each
//! such destructor then works on freed memory. There an object with a
//! destructor lives on the heap, owned through a pthread key, whose
//! destructor is handed the object's address itself.
//! Always inline: for a trivially destructible T it is one thread_local's
//! address, which callers on a spawn's path take directly (in a shared
//! object, each thread_local reached through another costs a call of
//! __tls_get_addr: 11 instructions).
template <class T, class Tag = T>
[[gnu::always_inline]] RCPPSPOOL_HIDDEN inline T* threadLocalObject()
{
#if defined(__MINGW32__)
    if constexpr (!std::is_trivially_destructible<T>::value) {
        static const pthread_key_t key = [] {
            pthread_key_t k{};
            pthread_key_create(&k, [](void* p) { delete static_cast<T*>(p); });
            return k;
        }();
        static thread_local T* mine = nullptr;  // trivially destructible
        if (!mine) {
            mine = new T{};
            pthread_setspecific(key, mine);
        }
        return mine;
    } else {
        static thread_local T own{};
        return &own;
    }
#else
    static thread_local T own{};
    return &own;
#endif
}

//! How many of the calling thread's objects of type T made by
//! lastingThreadLocal<T>() were destroyed (their destructor calls
//! threadLocalEnded<T>()). A trivially destructible thread_local: there
//! while the thread's other thread_locals are destroyed.
template <class T>
struct LastingSlots {
    T* first;  //!< the thread's first T, once made
    int ends;  //!< see threadLocalEnds()
};
//! lastingThreadLocal<T>()'s state on the calling thread: constant
//! initialized and trivially destructible (no guard, no destructor), so that
//! its fast path reaches thread-local storage once.
template <class T>
[[gnu::always_inline]] RCPPSPOOL_HIDDEN inline LastingSlots<T>& lastingSlots() noexcept
{
    static thread_local LastingSlots<T> slots{nullptr, 0};
    return slots;
}
template <class T>
RCPPSPOOL_HIDDEN inline int& threadLocalEnds() noexcept
{
    return lastingSlots<T>().ends;
}
//! Called by the destructor of a T of lastingThreadLocal<T>(). Not with
//! mingw-w64's emulated TLS, whose storage may be freed before the object
//! (held through a pthread key there) is destroyed.
template <class T>
inline void threadLocalEnded() noexcept
{
#if !defined(__MINGW32__)
    ++threadLocalEnds<T>();
#endif
}

template <class T>
struct SecondThreadLocal {};

//! lastingThreadLocal<T>() past its fast path: the thread's first T, made
//! now; the second T once the first was destroyed; null once that one is
//! gone too (out of line: once or twice a thread).
template <class T>
[[gnu::noinline]] RCPPSPOOL_HIDDEN T* lastingThreadLocalSlow()
{
    LastingSlots<T>& slots = lastingSlots<T>();
    if (slots.ends == 0) {
        if (!slots.first) slots.first = threadLocalObject<T>();
        if (slots.ends == 0) return slots.first;
    }
    if (slots.ends == 1) {
        static thread_local T* const second = threadLocalObject<T, SecondThreadLocal<T>>();
        if (slots.ends == 1) return second;
    }
    return nullptr;
}

//! threadLocalObject<T>() for state that may be used while the thread ends.
//! A thread's thread_locals are destroyed in the reverse order of their
//! making, so one made before T (a user's object whose destructor writes
//! to Rcout, say) is destroyed after it and may still use it: that used
//! the destroyed T (its std::string freed memory) and lost the text. After
//! T's destructor, a second T is made, destroyed in its turn (C++ runs the
//! destructors of thread_locals made while a thread's are destroyed, too);
//! after that, null: the caller goes without. Inline, the common case only
//! (a future's state is made and freed through it at every spawn: out of
//! line it cost 18 instructions a spawn, and in an R client its three
//! thread_locals cost three calls of __tls_get_addr); the rest out of line.
template <class T>
[[gnu::always_inline]] RCPPSPOOL_HIDDEN inline T* lastingThreadLocal()
{
    const LastingSlots<T>& slots = lastingSlots<T>();
    if (slots.first && slots.ends == 0) return slots.first;
    return lastingThreadLocalSlow<T>();
}

}  // namespace runtime
}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
