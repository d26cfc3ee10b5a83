// Where a seed for RcppSpool::Rng comes from: R's random number generator
// (so that set.seed() decides it), or, without R, std::random_device.
#pragma once

#include "../abi.h"

#include <cstdint>
#include <stdexcept>

#ifdef RCPPSPOOL_STANDALONE
#include <random>
#else
#include "r_api.h"
#include <R_ext/Random.h>
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {

#ifdef RCPPSPOOL_STANDALONE

//! 64 bits from std::random_device: a new seed on every call (no set.seed()
//! without R; pass a seed of your own to Rng for reproducible runs).
inline std::uint64_t drawSeed()
{
    std::random_device device;
    std::uint64_t hi = device(), lo = device();
    return (hi << 32) ^ lo;
}

#else

namespace rng_detail {
//! Two draws of R's generator, 32 bits each. With R's default generator
//! (Mersenne-Twister) unif_rand() is a 32-bit integer times 2^-32, so the
//! bits come back exactly; with other kinds they are still determined by
//! set.seed().
inline void drawFromR(void* data)
{
    auto* seed = static_cast<std::uint64_t*>(data);
    GetRNGstate();
    const double a = unif_rand();
    const double b = unif_rand();
    PutRNGstate();
    constexpr double two32 = 4294967296.0;
    auto bits = [](double u) {
        double x = u * 4294967296.0;
        return x >= two32 ? std::uint64_t(0xffffffffu) : static_cast<std::uint64_t>(x);
    };
    *seed = (bits(a) << 32) | bits(b);
}
}  // namespace rng_detail

//! 64 bits from R's random number generator (R's main thread only): reads
//! .Random.seed (GetRNGstate()), draws twice with unif_rand() and writes the
//! advanced state back (PutRNGstate()), as R's own runif() does. Inside
//! R_ToplevelExec, so that an R error (a corrupt .Random.seed, a user-supplied
//! generator failing) becomes a C++ exception instead of a jump over C++ frames.
inline std::uint64_t drawSeed()
{
    std::uint64_t seed = 0;
    if (R_ToplevelExec(rng_detail::drawFromR, &seed) == FALSE)
        throw std::runtime_error("RcppSpool::rngSeed(): R's random number generator failed (see the error above)");
    return seed;
}

#endif

}  // namespace host
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
