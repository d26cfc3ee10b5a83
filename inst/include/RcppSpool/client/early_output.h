// Rcout/Rcerr text that a client's threads write before the client has the
// runtime's table: kept in whole lines until the table is found, then handed
// to the runtime in order.
//
// Only an R package other than RcppSpool can be without the table, and only
// for a while: a sourceCpp() module or a package with `LinkingTo` only,
// loaded while RcppSpool's namespace was not (client/api.h), before its
// first call on R's main thread. A thread of its own (a plain std::thread)
// cannot look the table up (that needs R), so its text waits here. Written
// straight to the process's stdout and stderr a `<<` at a time, as it once
// was, lines of several threads tore into each other and went past R's
// console.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../engine/thread_local_object.h"
#include "../table/api_table.h"
#include "table_cache.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace client {
namespace early_output {

//! The text kept for the runtime: complete lines of every thread, in the
//! order they were completed. Written (and drained) under the lock, after a
//! look at whether the table is there, so that no text is queued after the
//! queue was drained.
struct Kept {
    std::mutex m;
    std::vector<std::pair<int, std::string>> lines;  // (stream, text)
    //! Ever used (by any thread, for a line kept here or for an unfinished
    //! one): only then does a write through the table look for the calling
    //! thread's unfinished lines (handOverMine()).
    std::atomic<bool> used{false};

    //! Never found (RcppSpool could not be loaded): nothing is lost, the
    //! text goes to the process's streams when this shared object goes.
    ~Kept()
    {
        for (auto& l : lines) std::fwrite(l.second.data(), 1, l.second.size(), l.first == 0 ? stdout : stderr);
    }
};
RCPPSPOOL_HIDDEN inline Kept& kept() noexcept
{
    static Kept k;
    return k;
}

//! Hands the kept lines to the runtime (caller holds kept().m).
inline void handOverLocked(const table::ApiTable& t)
{
    for (auto& l : kept().lines) t.write(l.first, l.second.data(), l.second.size(), table::kWriteWhole);
    kept().lines.clear();
}

//! A thread's unfinished line on each stream, kept until its end (a
//! newline, a flush, the thread's exit) or until the table is found.
struct Unfinished {
    std::string text[2];
    ~Unfinished();
};
//! The calling thread's (engine/thread_local_object.h: also while it ends);
//! null once even a second one is gone.
RCPPSPOOL_HIDDEN inline Unfinished* unfinished()
{
    return engine::runtime::lastingThreadLocal<Unfinished>();
}

//! Hands the calling thread's unfinished lines to the runtime (`t`), once
//! anything was kept (see Kept::used): a thread that began a line before
//! the table was found goes on with it. Any thread, at each write.
inline void handOverMine(const table::ApiTable& t) noexcept
{
    if (!kept().used.load(std::memory_order_relaxed)) return;
    Unfinished* mine = unfinished();
    if (!mine) return;
    for (int s = 0; s < 2; ++s) {
        std::string& line = mine->text[s];
        if (line.empty()) continue;
        t.write(s, line.data(), line.size(), table::kWritePiece);
        line.clear();
    }
}

//! The table was just found (`t`, already in the cache): hands over the
//! lines every thread kept, then the calling thread's unfinished lines.
//! After this no line is kept again: a thread that would keep one finds the
//! table under the lock (keep()), so writes need not take the lock.
inline void handOverAll(const table::ApiTable& t) noexcept
{
    {
        std::lock_guard<std::mutex> lk(kept().m);
        handOverLocked(t);
    }
    handOverMine(t);
}

//! How find() (client/api.h) hands the kept lines over once it has the
//! table: set by the first keep(). Every file of a client compiles find()
//! (it runs at load); only a file that writes text compiles the hand-over
//! (handOverAll() and the per-thread state it reaches put ~3 KB of code and
//! more of debug information into every object file that includes
//! RcppSpool.h). Constant-initialised: no code at load.
using HandOver = void (*)(const table::ApiTable&) noexcept;
RCPPSPOOL_HIDDEN inline std::atomic<HandOver> handOverHook{nullptr};

//! Keeps `size` bytes of text (WriteKind `kind`) for the runtime, written
//! while the table could not be had. Never throws: text that cannot be kept
//! (no memory) is lost.
inline void keep(int stream, const char* text, std::size_t size, int kind) noexcept
{
    kept().used.store(true, std::memory_order_relaxed);
    // Before the look at the table below (both sequentially consistent, as
    // find()'s store of the table and load of this): either this thread sees
    // the table, or find() sees the hook and drains what is kept.
    handOverHook.store(&handOverAll, std::memory_order_seq_cst);
    try {
        std::string piece;
        Unfinished* mine = kind == table::kWriteWhole ? nullptr : unfinished();
        if (!mine) {
            // Not part of the thread's lines (a progress redraw), or the
            // thread ends and even a second Unfinished is gone: as it is.
            piece.assign(text, size);
        } else {
            std::string& line = mine->text[stream];
            line.append(text, size);
            const std::size_t end = line.find_last_of("\r\n");
            const std::size_t cut = kind == table::kWriteFlush ? line.size() : end == std::string::npos ? 0 : end + 1;
            if (cut == 0) return;
            piece = line.substr(0, cut);
            line.erase(0, cut);
        }
        std::lock_guard<std::mutex> lk(kept().m);
        if (const table::ApiTable* t = api_detail::cache().load(std::memory_order_seq_cst)) {
            // Found meanwhile, and what was kept handed over: this goes after it.
            handOverLocked(*t);
            t->write(stream, piece.data(), piece.size(), table::kWriteWhole);
            return;
        }
        kept().lines.emplace_back(stream, std::move(piece));
    } catch (...) {
    }
}

//! A thread ends with an unfinished line: it goes as a line of its own (the
//! runtime's threads do the same with theirs).
inline Unfinished::~Unfinished()
{
    engine::runtime::threadLocalEnded<Unfinished>();
    for (int s = 0; s < 2; ++s)
        if (!text[s].empty()) keep(s, text[s].data(), text[s].size(), table::kWriteWhole);
}

}  // namespace early_output
}  // namespace client
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
