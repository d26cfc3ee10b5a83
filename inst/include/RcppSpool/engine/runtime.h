// Where the process-wide state lives: in this shared object, or in the one
// runtime of the process that the RcppSpool package serves to every package.
#pragma once

#include "../abi.h"
#include "thread_lender.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#if defined(__MINGW32__)
#include <pthread.h>
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {
namespace runtime {

//! The pieces of process-wide state. Every function of the headers that
//! keeps state for the whole process (marked RCPPSPOOL_HIDDEN) gets it here,
//! so that all packages of one ABI version share one copy: one global pool
//! and its workers, one interrupt flag, what each thread runs. (The host's
//! state and the thread settings are the runtime's alone: clients reach
//! them through its table, client/api_table.h.) The order is part of the
//! ABI: append, and bump the version.
enum class Slot : int {
    hostHooks,       //!< engine::HostHooks
    interruptFlag,   //!< std::atomic<bool>
    cancelEpoch,     //!< std::atomic<unsigned> (Context::cancelled()'s shortcut)
    forkGeneration,  //!< std::atomic<unsigned>
    globalPool,      //!< ThreadPool
    serviceRequests, //!< engine::ServiceRequests (since ABI 3)
    count
};

//! The same for state of which each thread has its own.
enum class ThreadSlot : int {
    frame,          //!< engine::Frame* (what the thread runs)
    worker,         //!< engine::WorkerTls (whose worker the thread is)
    outsideToken,   //!< char (the thread's identity among live threads)
    count
};

//! What a runtime serves: its ABI version and the address of each piece of
//! state (for the calling thread, for a ThreadSlot). A C-compatible table of
//! function pointers, so that it can cross shared objects through R's
//! registered C-callables.
struct Table {
    std::uint32_t abiVersion;
    std::uint32_t size;  //!< sizeof(Table) of the runtime
    void* (*state)(int slot);
    void* (*threadState)(int slot);
};

//! What must match, besides RCPPSPOOL_ABI_VERSION, for two shared objects to
//! share state: the standard library (two of them, or two configurations of
//! one, lay out std::mutex, std::deque and std::string differently) and the
//! sizes of the standard types our shared state holds.
inline std::string fingerprint()
{
    std::string s = "abi" + std::to_string(RCPPSPOOL_ABI_VERSION);
#if defined(_LIBCPP_VERSION)
    s += " libc++ " + std::to_string(_LIBCPP_VERSION);
#elif defined(__GLIBCXX__)
    s += " libstdc++ " + std::to_string(_GLIBCXX_RELEASE);
#else
    s += " other";
#endif
#if defined(_GLIBCXX_DEBUG) || defined(_LIBCPP_DEBUG)
    s += " debug";
#endif
    const std::size_t sizes[] = {sizeof(std::mutex), sizeof(std::condition_variable), sizeof(std::deque<int>),
                                 sizeof(std::string), sizeof(std::exception_ptr), sizeof(std::thread),
                                 sizeof(void*), alignof(std::max_align_t)};
    for (std::size_t z : sizes) s += " " + std::to_string(z);
    return s;
}

//! The shared runtime's table, or null when this shared object keeps its own
//! state (standalone C++, the RcppSpool package itself, a client that cannot
//! reach a runtime of its ABI version). Defined by the host: the standalone
//! host has none; the R host asks the RcppSpool package once, when this
//! shared object is loaded (see host/r_runtime.h).
#ifdef RCPPSPOOL_STANDALONE
inline const Table* findSharedTable() noexcept { return nullptr; }  // plain C++: nothing to share
#else
inline const Table* findSharedTable() noexcept;
#endif

//! The table this shared object uses, decided once.
RCPPSPOOL_HIDDEN inline const Table* sharedTable() noexcept
{
    static const Table* const table = findSharedTable();
    return table;
}

//! A runtime that lends this shared object its threads when it cannot share
//! its state (another ABI version: see ThreadLender), or null. Defined by
//! the host, like findSharedTable().
#ifdef RCPPSPOOL_STANDALONE
inline const ThreadLender* findThreadLender() noexcept { return nullptr; }
#else
inline const ThreadLender* findThreadLender() noexcept;
#endif

//! The lender this shared object's global pool borrows its workers from,
//! decided once (after sharedTable(): never both).
RCPPSPOOL_HIDDEN inline const ThreadLender* threadLender() noexcept
{
    static const ThreadLender* const lender = sharedTable() ? nullptr : findThreadLender();
    return lender;
}

//! The piece of state `S` of type T: the shared runtime's, else this shared
//! object's own. Call it once per accessor and keep the pointer.
template <class T, Slot S>
RCPPSPOOL_HIDDEN T* state()
{
    if (const Table* t = sharedTable()) return static_cast<T*>(t->state(static_cast<int>(S)));
    static T own;
    return &own;
}

//! The calling thread's own T (one per Tag), value-initialized at its first
//! use and destroyed when the thread ends: a thread_local, except where the
//! toolchain destroys thread_locals wrongly. mingw-w64's GCC keeps them in
//! emulated TLS, whose storage a thread's exit frees before it runs the
//! destructors of the objects in it (GCC bug 80816, mingw-w64 bug 527): each
//! such destructor then works on freed memory. There an object with a
//! destructor lives on the heap, owned through a pthread key, whose
//! destructor is handed the object's address itself.
template <class T, class Tag = T>
RCPPSPOOL_HIDDEN T* threadLocalObject()
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

//! The calling thread's piece of state `S` of type T (see state()).
template <class T, ThreadSlot S>
RCPPSPOOL_HIDDEN T* threadState()
{
    if (const Table* t = sharedTable()) return static_cast<T*>(t->threadState(static_cast<int>(S)));
    return threadLocalObject<T, std::integral_constant<ThreadSlot, S>>();
}

//! True when this shared object uses the process's shared runtime.
inline bool usesSharedRuntime() noexcept { return sharedTable() != nullptr; }
//! True when its global pool borrows the workers of a runtime it cannot
//! share (another ABI version): see threadLender().
inline bool borrowsThreads() noexcept { return threadLender() != nullptr; }

}  // namespace runtime
}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
