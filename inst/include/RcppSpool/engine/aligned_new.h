// CacheLineAllocated: heap objects with over-aligned members, allocated through malloc's fast path.
#pragma once

#include "../abi.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! A base whose class-level operator new/delete serve over-aligned types
//! (members on their own cache lines) from plain malloc, aligned by hand.
//! C++17's aligned new goes to glibc's memalign, which bypasses the
//! per-thread cache: every parallel loop's state took the arena's lock and
//! its bookkeeping (a tenth of a 2-item blocking loop's time on the calling
//! thread, in perf). malloc's fast path costs ~10 ns; the price is up to
//! `align` bytes more per object. Only for over-aligned types: `new` of
//! any other type derived from it does not compile.
struct CacheLineAllocated {
    static void* operator new(std::size_t bytes, std::align_val_t align) { return allocate(bytes, align); }
    static void* operator new[](std::size_t bytes, std::align_val_t align) { return allocate(bytes, align); }
    static void operator delete(void* p, std::align_val_t) noexcept { release(p); }
    static void operator delete[](void* p, std::align_val_t) noexcept { release(p); }

private:
    static void* allocate(std::size_t bytes, std::align_val_t align)
    {
        const std::size_t a = static_cast<std::size_t>(align);
        // malloc's blocks are aligned to 8 at least and `a` is a larger
        // power of two: the gap before the aligned address (at least 8
        // bytes) holds the pointer malloc returned.
        void* raw = std::malloc(bytes + a);
        if (!raw) throw std::bad_alloc();
        const std::uintptr_t p = (reinterpret_cast<std::uintptr_t>(raw) + a) & ~(std::uintptr_t(a) - 1);
        reinterpret_cast<void**>(p)[-1] = raw;
        return reinterpret_cast<void*>(p);
    }
    static void release(void* p) noexcept
    {
        if (p) std::free(static_cast<void**>(p)[-1]);
    }
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
