// Recording a timeline from plain C++ (R has timeline()): start, stop, write
// Chrome's trace-event JSON. Where the runtime is compiled (header-only
// RCPPSPOOL_STANDALONE, or the file that defines RCPPSPOOL_IMPLEMENTATION).
#pragma once

#include "abi.h"

#include <cstddef>
#include <stdexcept>
#include <string>

#include "client/api.h"
#include "trace_zone.h"

#if defined(RCPPSPOOL_RUNTIME_HERE) || defined(RCPPSPOOL_IMPLEMENTATION)
#include "runtime/trace_entries.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! One span of a timeline: `thread` (0: the thread that started the
//! recording, then 1, 2, ...), `kind` (engine::trace::Kind: chunk, task,
//! wait, main, zone), `start` and `end` in seconds since the recording
//! began, `id` (the loop, pool or group), `count` (loop pieces merged into
//! a chunk span; for a task, itself and the tasks deeper than
//! engine::trace::kRecordedTaskDepth in tasks that ran inside it, which are
//! no spans of their own) and `label` (a zone's name).
using TimelineSpan = engine::trace::Spanned;
//! A finished recording: `spans` (by thread, then start), `threadNames`,
//! `seconds` (its length) and `dropped` (events beyond a thread's buffer).
using Timeline = engine::trace::Recording;

//! Starts recording what every thread of the runtime does: each thread
//! keeps at most `eventsPerThread` spans (later ones are counted as
//! dropped). Throws std::logic_error if a recording runs already.
inline void timelineStart(std::size_t eventsPerThread = 100000)
{
    if (eventsPerThread == 0) throw std::invalid_argument("RcppSpool: timelineStart(): eventsPerThread must be positive");
    if (engine::trace::start(eventsPerThread) == engine::trace::Refusal::running)
        throw std::logic_error("RcppSpool: a timeline is being recorded already; timelineStop() ends it");
}

//! Stops the recording and returns it. Throws std::logic_error if none runs.
inline Timeline timelineStop()
{
    Timeline t;
    if (engine::trace::stop(t) != engine::trace::Refusal::none)
        throw std::logic_error("RcppSpool: no timeline is being recorded; timelineStart() begins one");
    return t;
}

//! Writes `t` as Chrome's trace-event JSON to `path` (Perfetto and
//! chrome://tracing open it). Throws std::runtime_error if it cannot.
inline void writeTrace(const Timeline& t, const std::string& path)
{
    std::string why;
    if (!runtime::writeChromeTrace(t, path, why)) throw std::runtime_error("RcppSpool: " + why);
}

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
#endif
