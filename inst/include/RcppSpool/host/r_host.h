// The host for R: only R's main thread may call R; it is serviced while it waits.
// Compiled in the runtime only (RcppSpool's shared library): clients reach it
// through the table (client/host_calls.h). The runtime never borrows, so
// nothing here forwards to a lender; it serves borrowers (engine/lending.h).
#pragma once

#include "../abi.h"

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>

#include "r_api.h"
#include <Rversion.h>

#include "../engine/host_hooks.h"
#include "../engine/trace.h"
#include "main_calls.h"
#include "main_thread.h"
#include "output_queue.h"
#include "r_guarded.h"
#include "r_runtime.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {

namespace detail {
struct PendingWrite {
    Stream stream;
    const std::string* text;
};
inline void callPrint(void* data)
{
    auto* w = static_cast<PendingWrite*>(data);
    if (w->stream == Stream::out)
        Rprintf("%s", w->text->c_str());
    else
        REprintf("%s", w->text->c_str());
}
}  // namespace detail

//! Writes text through R (main thread only). R's printing may notice a
//! pending interrupt and jump out; inside R_ToplevelExec that jump stops
//! there instead of unwinding C++ frames, and becomes the engine's interrupt.
inline void write(Stream s, const std::string& text)
{
    detail::PendingWrite w{s, &text};
    if (R_ToplevelExec(detail::callPrint, &w) == FALSE) {
        engine::interruptFlag().store(true, std::memory_order_relaxed);
        // Rprintf checks for an interrupt before it prints: print now (the
        // interrupt is no longer pending, so this call cannot jump).
        R_ToplevelExec(detail::callPrint, &w);
    }
}

//! Only R's main thread may call R's printing functions.
inline bool isOutputThread() { return isMainThread(); }

//! Whether the main thread has written part of a line to the stream and not
//! yet its end: other threads' lines must wait, or they would split it.
//! Whether R's main thread left a line unfinished on each stream.
struct MainLines {
    bool open[2] = {false, false};  // main thread only
};
RCPPSPOOL_HIDDEN inline bool& mainLineOpen(Stream s)
{
    static MainLines lines;
    return lines.open[s == Stream::out ? 0 : 1];
}

//! Writes what other threads queued (main thread only), except on a stream
//! whose current line the main thread has not finished, or (`holdOut`,
//! `holdErr`) a borrower's main thread has not (see ThreadLender).
inline void releaseOutput(bool holdOut = false, bool holdErr = false)
{
    holdOut = holdOut || mainLineOpen(Stream::out);
    holdErr = holdErr || mainLineOpen(Stream::err);
    for (auto& item : outputQueue().take(holdOut, holdErr)) write(item.first, item.second);
}

//! Text from the main thread: written at once, after the lines other threads
//! completed before it (also when `text` is empty: `Rcout << ""` releases).
inline void writeFromMain(Stream s, const std::string& text)
{
    releaseOutput();
    if (text.empty()) return;
    write(s, text);
    const char last = text.back();
    mainLineOpen(s) = last != '\n' && last != '\r';
    if (!mainLineOpen(s)) releaseOutput();
}

//! Complete lines from another thread: queued for the main thread.
inline void deliverLines(Stream s, std::string lines) { outputQueue().add(s, std::move(lines)); }

//! Text that is not part of a thread's lines (a progress line, redrawn in
//! place): from the main thread written at once, after the lines other
//! threads completed (and without RPrinter's bookkeeping of the main
//! thread's unfinished line: a progress line must not hold back the output
//! of workers); from another thread queued whole.
inline void writeWhole(Stream s, std::string text)
{
    if (!isOutputThread()) return outputQueue().add(s, std::move(text));
    releaseOutput();
    write(s, text);
}

//! Things drawn by the main thread when serviced (progress bars); see progress.h.
using RedrawFn = void (*)();
RCPPSPOOL_HIDDEN inline std::atomic<RedrawFn>& redrawHook()
{
    static std::atomic<RedrawFn> hook{nullptr};
    return hook;
}


//! Runs (or, after the user's interrupt, cancels) the calls other threads
//! handed to the main thread (RcppSpool::onMainThread()).
inline void runMainCalls()
{
    if (mainCalls().size() == 0) return;
    engine::serviceRequests().pending.store(false, std::memory_order_seq_cst);
    while (MainCall* c = mainCalls().take()) {
        if (engine::interruptRequested())
            c->cancel(c);
        else
            c->run(c);
    }
}

//! What R's main thread does while it waits: release output, redraw
//! progress, raise the engine's interrupt flag if the user interrupted, and
//! run the calls other threads handed to it.
inline void service()
{
    engine::trace::Span span(engine::trace::kMain, nullptr);  // a timeline's (if recording and not a mere poll)
    engine::serviceRequests().pending.store(false, std::memory_order_seq_cst);
    releaseOutput();
    if (RedrawFn redraw = redrawHook().load(std::memory_order_acquire)) redraw();
    if (!engine::interruptRequested() && pollInterrupt())
        engine::interruptFlag().store(true, std::memory_order_relaxed);
    runMainCalls();
}

//! A blocking call on the main thread returns: run (or, after an interrupt,
//! cancel) the calls handed to the main thread, release output, redraw, and
//! say why it ends if the user interrupted (R's interrupt condition that
//! follows carries no message).
inline void afterBlockingCall()
{
    engine::trace::Span span(engine::trace::kMain, nullptr);
    runMainCalls();
    releaseOutput();
    if (RedrawFn redraw = redrawHook().load(std::memory_order_acquire)) redraw();
    if (engine::interruptRequested()) REprintf("C++ call interrupted by the user.\n");
}

namespace detail {
// Installed when the shared object that includes this header is loaded.
RCPPSPOOL_HIDDEN inline const bool rHostInstalled = [] {
    auto& h = engine::hostHooks();
    h.isServiceThread = &isMainThread;
    h.service = &service;
    h.afterBlockingCall = &afterBlockingCall;
    return true;
}();
}  // namespace detail

}  // namespace host
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
