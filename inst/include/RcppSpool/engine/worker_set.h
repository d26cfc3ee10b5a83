// A lock-free set of worker indices: which workers' deques may hold tasks.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! A set of worker indices, one bit each, that threads update and read
//! without locks. The scheduler keeps in it the workers that pushed tasks
//! since they last went idle, so that a thread looking for work (or making
//! sure there is none before it sleeps) looks into those workers' deques
//! only: with 64 workers of which 2 are busy, 2 deques and one word instead
//! of 64 deques. Only worker i inserts or erases i (see Scheduler).
class WorkerSet {
public:
    static constexpr std::size_t kBitsPerWord = 64;

    //! Makes the set empty, able to hold indices 0 to n - 1. The scheduler
    //! calls it while it has no workers; a thread outside the pool may still
    //! look (as it may read the workers' array): the word count is atomic,
    //! and the words are reallocated only when the set must grow.
    void reset(std::size_t n)
    {
        const std::size_t words = (n + kBitsPerWord - 1) / kBitsPerWord;
        if (words > capacity_) {
            words_.reset(new Word[words]);
            capacity_ = words;
        }
        for (std::size_t k = 0; k < capacity_; ++k) words_[k].bits.store(0, std::memory_order_relaxed);
        count_.store(words, std::memory_order_relaxed);
    }

    //! Adds `i`. Sequentially consistent: a thread whose contains-check
    //! (forEach()) comes later sees it, and so sees what `i`'s owner did before.
    void insert(std::size_t i) noexcept
    {
        words_[i / kBitsPerWord].bits.fetch_or(bit(i), std::memory_order_seq_cst);
    }
    //! Removes `i`.
    void erase(std::size_t i) noexcept
    {
        words_[i / kBitsPerWord].bits.fetch_and(~bit(i), std::memory_order_seq_cst);
    }

    //! Calls `f(i)` for the indices in the set, starting at a position given
    //! by `start` (so that threads that search at once spread over the
    //! victims), until `f` returns true; returns whether one did. `order`
    //! for the loads of the set: seq_cst where a sleeper's last look must
    //! see every insert before it (see Scheduler::hasVisibleWork()).
    template <class F>
    bool forEach(std::uint64_t start, F&& f, std::memory_order order = std::memory_order_relaxed) const
    {
        const std::size_t n = count_.load(std::memory_order_relaxed);
        if (n == 0) return false;
        // No division on the common path: up to 64 workers, one word.
        const std::size_t firstWord = n == 1 ? 0 : static_cast<std::size_t>((start >> 6) % n);
        const unsigned firstBit = static_cast<unsigned>(start & 63);
        for (std::size_t k = 0, w = firstWord; k < n; ++k, w = w + 1 == n ? 0 : w + 1) {
            const std::uint64_t bits = words_[w].bits.load(order);
            if (!bits) continue;
            // The bits from firstBit up, then those below it.
            const std::uint64_t high = bits & (~std::uint64_t{0} << firstBit);
            if (visit(w, high, f) || visit(w, bits & ~high, f)) return true;
        }
        return false;
    }

    //! How many indices the set holds now (for tests).
    std::size_t size() const noexcept
    {
        std::size_t s = 0;
        for (std::size_t k = 0, n = count_.load(std::memory_order_relaxed); k < n; ++k)
            for (std::uint64_t b = words_[k].bits.load(std::memory_order_relaxed); b; b &= b - 1) ++s;
        return s;
    }

private:
    // A word per cache line: the words change as workers go idle and busy,
    // and must not share a line with what is read at every push.
    struct alignas(64) Word {
        std::atomic<std::uint64_t> bits{0};
    };

    static std::uint64_t bit(std::size_t i) noexcept { return std::uint64_t{1} << (i % kBitsPerWord); }

    template <class F>
    static bool visit(std::size_t word, std::uint64_t bits, F& f)
    {
        for (; bits; bits &= bits - 1)
            if (f(word * kBitsPerWord + static_cast<std::size_t>(__builtin_ctzll(bits)))) return true;
        return false;
    }

    std::unique_ptr<Word[]> words_;
    std::size_t capacity_ = 0;  //!< words allocated
    std::atomic<std::size_t> count_{0};  //!< words in use
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
