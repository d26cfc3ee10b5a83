// How a client calls the table's entries of version 3 (pools, tasks,
// futures, groups): without a message buffer in the caller's frame, and with
// a failure turned into the exception it reports, out of line.
#pragma once

#include "../abi.h"

#include <exception>

#include "api.h"
#include "host_calls.h"
#include "../table/task_unit.h"
#if defined(RCPPSPOOL_RUNTIME_HERE)
#include "../runtime/task_entries.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace client {

//! Throws what `status` (not kOk) reports, with the message the runtime
//! kept for this thread (ApiTable::lastMessage). Out of line: the hot calls
//! keep no message buffer in their frames (a 256-byte buffer in every frame
//! of a recursion that spawns made fib's stack five times as deep).
[[noreturn, gnu::noinline, gnu::cold]] inline void throwLastStatus(int status)
{
    char message[256];
    message[0] = '\0';
    RCPPSPOOL_API(lastMessage)(message, sizeof message);
    throwStatus(status, message);
}
//! The same for a call that may have handed back a task's error.
[[noreturn, gnu::noinline, gnu::cold]] inline void throwLastStatus(int status, table::ErrorBox* box)
{
    if (status == table::kCallbackFailed && box) {
        box->rethrow(box);
        std::terminate();  // (rethrow never returns)
    }
    throwLastStatus(status);
}

//! A task the runtime did not queue (`status`): released (a future then
//! reports it cancelled), and the status thrown.
[[noreturn, gnu::noinline, gnu::cold]] inline void discardAndThrow(table::TaskUnit& task, int status)
{
    task.op(table::kTaskDiscard, task.storage);
    throwLastStatus(status);
}

//! Calls the runtime's `entry` (of version 3: no message buffer) with
//! `args`; throws what a status other than kOk reports.
template <class Entry, class... A>
[[gnu::always_inline]] inline void call(Entry entry, A... args)
{
    const int status = entry(args..., nullptr, 0);
    if (status != table::kOk) throwLastStatus(status);
}
//! The same for an entry that may hand back a task's error, rethrown.
template <class Entry, class... A>
[[gnu::always_inline]] inline void callForError(Entry entry, A... args)
{
    table::ErrorBox* box = nullptr;
    const int status = entry(args..., &box, nullptr, 0);
    if (status != table::kOk) throwLastStatus(status, box);
}

//! A blocking call of this client ends: on R's main thread, the runtime
//! releases output and the user's interrupt is thrown (and cleared); else
//! `error`, if any, is rethrown.
inline void endBlockingCall(std::exception_ptr error = nullptr)
{
    if (onServiceThread()) call(RCPPSPOOL_API(endBlockingCall));
    if (error) std::rethrow_exception(error);
}

}  // namespace client
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
