// The runtime's host services, as clients call them (client/host_calls.h):
// R's console for Rcout/Rcerr, the user's interrupt, R's main thread and
// the progress objects it draws. The host itself (host/r_host.h, or
// host/standalone.h without R) is compiled here only, once.
#pragma once

#include "../abi.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "../table/api_table.h"
#include "../engine/host_hooks.h"
#include "../engine/runtime.h"
#ifdef RCPPSPOOL_STANDALONE
#include "../host/standalone.h"
#else
#include "../host/r_host.h"
#include "progress_registry.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {

//! A thread's unfinished line on each stream. A thread that ends with one
//! hands it over as a line of its own (a std::thread's last words).
struct PrintBuffers {
    std::string out, err;
    ~PrintBuffers() noexcept
    {
        engine::runtime::threadLocalEnded<PrintBuffers>();
        try {
            if (!out.empty()) deliverLines(Stream::out, std::move(out));
            if (!err.empty()) deliverLines(Stream::err, std::move(err));
        } catch (...) {
        }
    }
};

}  // namespace host

namespace runtime {
namespace host_detail {

//! The calling thread's unfinished line on stream `s`; null once the thread
//! ends and even a second buffer is gone (engine/thread_local_object.h:
//! what thread_locals destroyed after the first write while the thread
//! ends gets whole lines too; it wrote into the destroyed buffer, and lost).
RCPPSPOOL_HIDDEN inline std::string* unfinishedLine(host::Stream s)
{
    // The runtime's alone (clients hand text over through the table).
    host::PrintBuffers* mine = engine::runtime::lastingThreadLocal<host::PrintBuffers>();
    if (!mine) return nullptr;
    return s == host::Stream::out ? &mine->out : &mine->err;
}

//! A `<<`'s text: R's main thread writes at once (the host keeps other
//! threads' lines out of its unfinished line). Other threads hand over what
//! is complete: up to the last newline or carriage return, or everything
//! when flushing; the rest waits in the thread's unfinished line.
inline void writePiece(host::Stream s, std::string piece, bool flush)
{
    if (host::isOutputThread()) return host::writeFromMain(s, piece);
    std::string* kept = unfinishedLine(s);
    if (!kept) {
        if (!piece.empty()) host::deliverLines(s, std::move(piece));  // nothing can wait: as it is
        return;
    }
    std::string& line = *kept;
    const std::size_t lineEnd = piece.find_last_of("\r\n");
    const std::size_t cut = flush ? piece.size() : lineEnd == std::string::npos ? 0 : lineEnd + 1;
    if (cut == 0 && !flush) {
        line += piece;
        return;
    }
    if (line.empty()) {
        if (cut == piece.size()) {
            if (cut > 0) host::deliverLines(s, std::move(piece));  // the usual case: no copy
            return;
        }
        host::deliverLines(s, piece.substr(0, cut));
    } else {
        line.append(piece, 0, cut);
        host::deliverLines(s, std::move(line));
        line.clear();
    }
    line.append(piece, cut, std::string::npos);
}

}  // namespace host_detail

//! ApiTable::write. Never throws: text that cannot be had (no memory) is lost.
inline void write(int stream, const char* text, std::size_t size, int kind) noexcept
{
    try {
        const host::Stream s = stream == 0 ? host::Stream::out : host::Stream::err;
        std::string piece(text, size);
        if (kind == table::kWriteWhole)
            host::writeWhole(s, std::move(piece));
        else
            host_detail::writePiece(s, std::move(piece), kind == table::kWriteFlush);
    } catch (...) {
    }
}

//! ApiTable::interrupted.
inline int interrupted(int consume) noexcept
{
    try {
        const bool service = engine::onServiceThread();
        if (service && engine::hostHooks().service) engine::hostHooks().service();
        if (!engine::interruptRequested()) return 0;
        // Reported on the main thread: the next call starts afresh.
        if (consume && service) engine::interruptFlag().store(false, std::memory_order_relaxed);
        return 1;
    } catch (...) {
        return engine::interruptRequested() ? 1 : 0;
    }
}

//! ApiTable::serviceMainThread.
inline void serviceMainThread(int blockingCallEnds) noexcept
{
    if (!engine::onServiceThread()) return;
    const engine::HostHooks& h = engine::hostHooks();
    try {
        if (auto f = blockingCallEnds ? h.afterBlockingCall : h.service) f();
    } catch (...) {
    }
}

//! ApiTable::postMainCall.
inline void postMainCall(table::MainCall* call) noexcept
{
#ifdef RCPPSPOOL_STANDALONE
    call->run(call);  // no main thread to serve: at once (onMainThread() does not get here)
#else
    host::postToMainThread(call);
#endif
}

//! ApiTable::registerProgress.
inline void registerProgress(int add, void* self, table::DrawFn draw) noexcept
{
#ifdef RCPPSPOOL_STANDALONE
    (void)add, (void)self, (void)draw;  // without R any thread draws: nothing to register
#else
    try {
        if (add)
            progress_detail::registry().add(self, draw);
        else
            progress_detail::registry().remove(self);
    } catch (...) {
    }
#endif
}

}  // namespace runtime
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
