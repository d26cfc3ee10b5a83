// Checking for the user's interrupt, from any thread.
#pragma once

#include "engine/host_hooks.h"

namespace RcppSpool {

//! Thrown by checkUserInterrupt() and by blocking calls once the user
//! interrupted; what() is "C++ call interrupted by the user.".
using UserInterruptException = engine::UserInterruptException;

//! True once the user interrupted (Ctrl-C in R) during the current call. On
//! R's main thread it asks R (safely); elsewhere it reads a flag (a few ns).
//! `condition` lets callers check only every so often: false returns false.
inline bool isInterrupted(bool condition = true)
{
    if (!condition) return false;
    if (engine::onServiceThread() && engine::hostHooks().service) engine::hostHooks().service();
    return engine::interruptRequested();
}

//! Throws UserInterruptException once the user interrupted (see isInterrupted()).
inline void checkUserInterrupt(bool condition = true)
{
    if (isInterrupted(condition)) {
        // Delivered on the main thread: the next call starts afresh.
        if (engine::onServiceThread()) engine::interruptFlag().store(false, std::memory_order_relaxed);
        throw UserInterruptException();
    }
}

}  // namespace RcppSpool
