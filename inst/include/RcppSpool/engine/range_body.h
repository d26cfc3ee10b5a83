// What a loop body is: a range body f(b, e) or an index body f(i).
#pragma once

#include "../abi.h"

#include <cstddef>
#include <type_traits>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! True when `F` is a range body, called as f(begin, end) once per chunk;
//! otherwise it is an index body, called as f(i) for each index. A callable
//! that takes both forms is used as a range body.
template <class F>
inline constexpr bool isRangeBody = std::is_invocable_v<F&, std::ptrdiff_t, std::ptrdiff_t>;

//! Runs `f` over the chunk [b, e): once as f(b, e), or f(i) for each index.
template <class F>
inline void runChunk(F& f, std::ptrdiff_t b, std::ptrdiff_t e)
{
    if constexpr (isRangeBody<F>) {
        f(b, e);
    } else {
        for (std::ptrdiff_t i = b; i < e; ++i) f(i);
    }
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
