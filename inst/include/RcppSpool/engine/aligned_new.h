// CacheLineAllocated: heap objects with over-aligned members, allocated through malloc's fast path.
#pragma once

#include "../abi.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

#include "runtime.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! A base whose class-level operator new/delete serve over-aligned types
//! (members on their own cache lines) from plain malloc, aligned by hand.
//! C++17's aligned new goes to glibc's memalign, which bypasses the
//! per-thread cache: every parallel loop's state took the arena's lock and
//! its bookkeeping (a tenth of a 2-item blocking loop's time on the calling
//! thread, in perf). malloc's fast path costs ~10 ns; the price is up to
//! `align` bytes more per object (small ones: see kSpareBytes). Only for over-aligned types: `new` of
//! any other type derived from it does not compile.
struct CacheLineAllocated {
    static void* operator new(std::size_t bytes, std::align_val_t align) { return allocate(bytes, align); }
    static void* operator new[](std::size_t bytes, std::align_val_t align) { return allocate(bytes, align); }
    static void operator delete(void* p, std::align_val_t) noexcept { release(p); }
    static void operator delete[](void* p, std::align_val_t) noexcept { release(p); }

private:
    //! Blocks of up to kSpareBytes (with the alignment's gap) are all
    //! allocated kSpareBytes long, and each thread keeps one freed such
    //! block for its next allocation. Every blocking parallel loop allocates
    //! its state and frees it when it ends, mostly on the calling thread:
    //! through malloc and free that was ~130 of a 2-item loop's ~1,070
    //! instructions (callgrind); from the spare, ~15.
    static constexpr std::size_t kSpareBytes = 1024;
    struct Spare {
        void* raw = nullptr;
        // (Null after: a loop released during the thread's exit, after
        // this, frees its block or leaves it here, never reuses a freed one.)
        ~Spare() { std::free(std::exchange(raw, nullptr)); }
    };
    static Spare& spare() { return *runtime::threadLocalObject<Spare>(); }

    static void* allocate(std::size_t bytes, std::align_val_t align)
    {
        const std::size_t a = static_cast<std::size_t>(align);
        // malloc's blocks are aligned to 8 at least and `a` is a larger
        // power of two: the gap before the aligned address (at least 8
        // bytes) holds the pointer malloc returned, its lowest bit set for
        // a block of kSpareBytes.
        const bool small = bytes + a <= kSpareBytes;
        void* raw = small ? std::exchange(spare().raw, nullptr) : nullptr;
        if (!raw) raw = std::malloc(small ? kSpareBytes : bytes + a);
        if (!raw) throw std::bad_alloc();
        const std::uintptr_t p = (reinterpret_cast<std::uintptr_t>(raw) + a) & ~(std::uintptr_t(a) - 1);
        reinterpret_cast<std::uintptr_t*>(p)[-1] = reinterpret_cast<std::uintptr_t>(raw) | (small ? 1u : 0u);
        return reinterpret_cast<void*>(p);
    }
    static void release(void* p) noexcept
    {
        if (!p) return;
        const std::uintptr_t tagged = static_cast<std::uintptr_t*>(p)[-1];
        void* raw = reinterpret_cast<void*>(tagged & ~std::uintptr_t(1));
        if (tagged & 1u) {
            Spare& s = spare();
            if (!s.raw) {
                s.raw = raw;
                return;
            }
        }
        std::free(raw);
    }
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
