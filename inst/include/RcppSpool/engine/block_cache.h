// BlockCache: small blocks a worker keeps for reuse (the states of futures).
#pragma once

#include "../abi.h"

#include <cstddef>
#include <new>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! Freed small blocks kept by one thread for its next allocations of the same
//! size class. Every async() that is queued allocates the state its Future
//! shares with the task, and frees it when both are done, at the rate of
//! tasks. Recursive code allocates deep and frees shallow, and glibc's
//! per-thread cache holds 7 blocks of a size, so most of those went to the
//! shared heap (its locks and its bookkeeping: 160 of 870 instructions per
//! task of fib). Only the owning thread touches a cache; a block freed on
//! another thread goes to that thread's cache (all come from operator new).
//! It keeps at most kKeep blocks per class (64 KB in all), freed with it.
class BlockCache {
public:
    static constexpr std::size_t kGranule = 64;
    static constexpr std::size_t kClasses = 4;  // 64, 128, 192, 256 bytes
    static constexpr int kKeep = 64;

    BlockCache() = default;
    BlockCache(const BlockCache&) = delete;
    BlockCache& operator=(const BlockCache&) = delete;
    ~BlockCache()
    {
        for (Block*& head : free_)
            while (Block* b = head) {
                head = b->next;
                ::operator delete(static_cast<void*>(b));
            }
    }

    //! The size actually allocated for a block of `bytes` (a whole class).
    static constexpr std::size_t rounded(std::size_t bytes) noexcept
    {
        return bytes <= kGranule * kClasses ? (bytes + kGranule - 1) / kGranule * kGranule : bytes;
    }

    //! The size class of a block of `bytes` (kClasses or more: none, never kept).
    static constexpr std::size_t classOf(std::size_t bytes) noexcept { return bytes == 0 ? 0 : (bytes - 1) / kGranule; }

    //! A kept block for `bytes`, or null.
    void* take(std::size_t bytes) noexcept
    {
        const std::size_t c = classOf(bytes);
        if (c >= kClasses || !free_[c]) return nullptr;
        Block* b = free_[c];
        free_[c] = b->next;
        --count_[c];
        return b;
    }

    //! Keeps `p` (a block of `bytes` from operator new(rounded(bytes))) if
    //! there is room; false if the caller must free it.
    bool give(void* p, std::size_t bytes) noexcept { return giveToClass(p, classOf(bytes)); }
    //! give() of a block whose class (classOf()) is `c`.
    bool giveToClass(void* p, std::size_t c) noexcept
    {
        if (c >= kClasses || count_[c] >= kKeep) return false;
        Block* b = ::new (p) Block{free_[c]};
        free_[c] = b;
        ++count_[c];
        return true;
    }

private:
    struct Block {
        Block* next;
    };
    Block* free_[kClasses] = {};
    int count_[kClasses] = {};
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
