// parallelReduce: a reduction whose result does not depend on the thread count.
#pragma once

#include "abi.h"

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "client/loop_call.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

namespace detail {
template <class Map, class = void>
struct MapsRanges : std::false_type {};
template <class Map>
struct MapsRanges<Map, std::void_t<decltype(std::declval<Map&>()(std::ptrdiff_t{}, std::ptrdiff_t{}))>>
    : std::true_type {};
}  // namespace detail

//! Reduces map(i) over [begin, end) with `combine`, starting from `identity`,
//! on up to `nThreads` threads of the global pool.
//!
//! The result is bitwise the same for any nThreads: the range is cut into
//! blocks that depend only on its length (at most 1024 of them), each block
//! is folded left to right (`acc = combine(acc, map(i))`, starting from
//! `identity`), and the block results are folded left to right. `map` may
//! instead take a range, `map(a, b)`, returning the value of [a, b).
//! An empty range gives `identity`. Any nThreads is allowed; the default,
//! table::kAutoThreads, means defaultThreads().
template <class T, class Map, class Combine>
T parallelReduce(std::ptrdiff_t begin, std::ptrdiff_t end, T identity, Map&& map, Combine&& combine,
                 std::size_t nThreads = table::kAutoThreads)
{
    if (end <= begin) return identity;
    const std::ptrdiff_t n = end - begin;
    const std::ptrdiff_t nBlocks = std::min<std::ptrdiff_t>(n, 1024);
    auto blockBegin = [&](std::ptrdiff_t k) {
        // k * n / nBlocks without overflow for any ptrdiff_t range.
        return begin + (n / nBlocks) * k + std::min<std::ptrdiff_t>(k, n % nBlocks);
    };
    std::vector<T> partial(static_cast<std::size_t>(nBlocks), identity);
    auto body = [&](std::ptrdiff_t k) {
        const std::ptrdiff_t a = blockBegin(k), b = blockBegin(k + 1);
        if constexpr (detail::MapsRanges<Map>::value) {
            partial[k] = map(a, b);
        } else {
            T acc = identity;
            for (std::ptrdiff_t i = a; i < b; ++i) acc = combine(std::move(acc), map(i));
            partial[k] = std::move(acc);
        }
    };
    client::parallelFor(0, nBlocks, body, nThreads, 0);
    T result = std::move(identity);
    for (auto& p : partial) result = combine(std::move(result), std::move(p));
    return result;
}

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
