// The runtime's side of a timeline: zones of clients (through the table),
// starting and stopping a recording, and Chrome's trace-event JSON.
#pragma once

#include "../abi.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "../engine/trace.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace runtime {

//! TraceZone's start: the clock if a recording runs, else 0.
inline std::int64_t traceZoneBegin() noexcept
{
    return engine::trace::recording() ? engine::trace::now() : 0;
}

//! TraceZone's end: the span [start, now) named `name` on the calling
//! thread (the name is copied, cut to 31 bytes).
inline void traceZoneEnd(const char* name, std::int64_t start) noexcept
{
    if (start) engine::trace::record(engine::trace::kZone, 0, start, name);
}

namespace trace_detail {

//! `text` as a JSON string's contents.
inline void jsonEscape(std::string& out, const std::string& text)
{
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char u[8];
            std::snprintf(u, sizeof u, "\\u%04x", c);
            out += u;
        } else {
            out += static_cast<char>(c);
        }
    }
}

}  // namespace trace_detail

//! `rec` as Chrome's trace-event JSON: complete events ("ph": "X", ts and
//! dur in microseconds) sorted by thread and start (so ts never decreases
//! within a tid), and each thread's name as metadata ("ph": "M"). Perfetto
//! and chrome://tracing open it as it is.
inline std::string chromeTraceJson(const engine::trace::Recording& rec)
{
    std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"source\":\"RcppSpool\",\"dropped\":";
    out += std::to_string(rec.dropped);
    out += "},\"traceEvents\":[\n";
    bool first = true;
    for (std::size_t t = 0; t < rec.threadNames.size(); ++t) {
        out += first ? "" : ",\n";
        first = false;
        out += "{\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(t) +
               ",\"name\":\"thread_name\",\"args\":{\"name\":\"";
        trace_detail::jsonEscape(out, rec.threadNames[t]);
        out += "\"}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(t) +
               ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + std::to_string(t) + "}}";
    }
    char number[64];
    for (const engine::trace::Spanned& s : rec.spans) {
        out += first ? "" : ",\n";
        first = false;
        const char* kind = engine::trace::kindName(s.kind);
        out += "{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(s.thread) + ",\"name\":\"";
        if (!s.label.empty())
            trace_detail::jsonEscape(out, s.label);
        else
            out += kind;
        out += "\",\"cat\":\"";
        out += kind;
        std::snprintf(number, sizeof number, "\",\"ts\":%.3f,\"dur\":%.3f", s.start * 1e6,
                      (s.end - s.start) * 1e6);
        out += number;
        out += ",\"args\":{\"id\":" + std::to_string(s.id) + ",\"pieces\":" + std::to_string(s.count) + "}}";
    }
    out += "\n]}\n";
    return out;
}

//! Writes chromeTraceJson(rec) to `path`; false (with errno's meaning in
//! `why`) if it cannot be written.
inline bool writeChromeTrace(const engine::trace::Recording& rec, const std::string& path, std::string& why)
{
    const std::string json = chromeTraceJson(rec);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        why = "cannot open '" + path + "' for writing";
        return false;
    }
    const bool ok = std::fwrite(json.data(), 1, json.size(), f) == json.size();
    if (std::fclose(f) != 0 || !ok) {
        why = "cannot write '" + path + "'";
        return false;
    }
    return true;
}

}  // namespace runtime
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
