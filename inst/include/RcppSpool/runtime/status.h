// How the runtime's entry points report: a status and a message, never an
// exception across the table (table/api_table.h).
#pragma once

#include "../abi.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <utility>

#include "../table/api_table.h"
#include "../table/task_unit.h"
#include "../engine/host_hooks.h"
#include "../engine/task.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace runtime {

//! Thrown inside a loop when the client's callback reports a failure: it
//! cancels the loop as the body's own exception would.
struct CallbackFailed {};

//! The calling thread's last message, for a client that passed no buffer
//! (ApiTable::lastMessage): a hot call then keeps no buffer in its frame.
constexpr std::size_t kLastMessageBytes = 256;
RCPPSPOOL_HIDDEN inline char* lastMessageBuffer() noexcept
{
    static thread_local char text[kLastMessageBytes];
    return text;
}

//! Copies `text` into `message` (at most `size` bytes, ending in '\0'), or,
//! without a buffer, into the thread's last message.
inline void report(const char* text, char* message, std::size_t size) noexcept
{
    if (!message || size == 0) {
        message = lastMessageBuffer();
        size = kLastMessageBytes;
    }
    const std::size_t n = std::min(std::strlen(text), size - 1);
    std::memcpy(message, text, n);
    message[n] = '\0';
}

//! Runs `f`, turning what it throws into a status and a message: no
//! exception crosses the table. Inlined into each entry point: as a call of
//! its own it cost a blocking loop over 2 items ~20 instructions of
//! prologue and epilogue (callgrind).
//! `box`: where a client's task error (engine::TaskFailed) goes, boxed, with
//! kCallbackFailed; null where none can come.
template <class F>
[[gnu::always_inline]] inline int guarded(char* message, std::size_t size, table::ErrorBox** box, F&& f) noexcept
{
    try {
        f();
        return table::kOk;
    } catch (const CallbackFailed&) {
        return table::kCallbackFailed;
    } catch (const engine::TaskFailed& failed) {
        table::ErrorBox* b = failed.take();
        if (box) {
            *box = b;
        } else if (b) {
            b->destroy(b);
        }
        if (!box || !b) report("RcppSpool: a task's error was lost", message, size);
        return box && b ? table::kCallbackFailed : table::kFailed;
    } catch (const std::invalid_argument& e) {
        report(e.what(), message, size);
        return table::kInvalidArgument;
    } catch (const std::logic_error& e) {
        report(e.what(), message, size);
        return table::kLogicError;
    } catch (const std::exception& e) {
        // The user's interrupt comes in whichever type the host installed
        // (engine::interruptError(): UserInterruptException with Rcpp's
        // interrupt as a base where a file of the process included Rcpp,
        // without it elsewhere): all say kInterruptMessage. Only the
        // runtime's own errors get here; the client's callbacks keep theirs.
        if (std::strcmp(e.what(), engine::kInterruptMessage) == 0) return table::kInterrupted;
        report(e.what(), message, size);
        return table::kFailed;
    } catch (...) {
        report("RcppSpool: an unknown error in the runtime", message, size);
        return table::kFailed;
    }
}
template <class F>
[[gnu::always_inline]] inline int guarded(char* message, std::size_t size, F&& f) noexcept
{
    return guarded(message, size, nullptr, std::forward<F>(f));
}

}  // namespace runtime
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
