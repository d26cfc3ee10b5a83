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

}  // namespace runtime
}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
