// TraceZone: a named span of the calling thread in a timeline (R: timeline()).
#pragma once

#include "abi.h"

#include <cstdint>

#include "client/api.h"
#if defined(RCPPSPOOL_RUNTIME_HERE)
#include "runtime/trace_entries.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! Marks a named span on the calling thread, from its declaration to the
//! end of the scope, in the timeline being recorded (R's timeline(), or
//! timelineStart() in plain C++), as Tracy's ZoneScopedN does:
//! `RcppSpool::TraceZone zone("sort");`. While nothing records it costs a
//! call that reads one flag. The name must live until the zone ends (a
//! string literal does); the timeline keeps its first 31 bytes.
class TraceZone {
public:
    //! Begins the zone `name`.
    explicit TraceZone(const char* name) : name_(name), start_(RCPPSPOOL_API(traceZoneBegin)()) {}
    TraceZone(const TraceZone&) = delete;
    TraceZone& operator=(const TraceZone&) = delete;
    //! Ends the zone: its span goes into the recording, if one runs.
    ~TraceZone()
    {
        if (start_) RCPPSPOOL_API(traceZoneEnd)(name_, start_);
    }

private:
    const char* name_;
    std::int64_t start_;
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
