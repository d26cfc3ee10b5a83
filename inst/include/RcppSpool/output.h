// Rcout and Rcerr: printing from any thread.
#pragma once

#include "abi.h"

#include <ostream>
#include <sstream>
#include <string>

#ifdef RCPPSPOOL_STANDALONE
#include "host/standalone.h"
#else
#include "host/r_host.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! A stream that may be written from any thread, like std::cout.
//!
//! Each thread assembles its own text, so a line built by several `<<` on one
//! thread arrives whole. In R, text of threads other than R's main thread is
//! queued line by line and released by the main thread: while it waits, when
//! a blocking call returns (by error too), and whenever it writes itself, even
//! `Rcout << ""`; lines of other threads never split a line the main thread
//! has begun. A thread's partial line is handed over at its newline (or
//! carriage return) or at std::flush / std::endl, however long it is.
//! Rcerr writes to the error stream (REprintf in R), never to stdout.
class RPrinter {
public:
    explicit constexpr RPrinter(host::Stream s) noexcept : stream_(s) {}

    template <class T>
    RPrinter& operator<<(const T& value)
    {
        Buffer& b = buffer();
        b.format << value;
        commit(b, false);
        return *this;
    }

    //! Manipulators: std::endl, std::flush, std::setw, ...
    RPrinter& operator<<(std::ostream& (*manip)(std::ostream&))
    {
        Buffer& b = buffer();
        manip(b.format);
        commit(b, manip == static_cast<std::ostream& (*)(std::ostream&)>(std::flush) ||
                      manip == static_cast<std::ostream& (*)(std::ostream&)>(std::endl));
        return *this;
    }

    //! Hands over the calling thread's unfinished line, if any (as a flush
    //! would). Thread calls it when its function returns, so that text
    //! without a final newline is not lost with the thread.
    void flushThisThread() const { commit(buffer(), true); }

    // Per thread and stream: `format` formats one `<<` at a time (and keeps
    // the stream's flags, widths and precision across them); `line` holds
    // the unfinished line. Only the new piece is searched for a line end, so
    // a long line built by many `<<` costs linear time, not quadratic.
    // (Public only because the process's runtime keeps them: src/runtime_owner.h.)
    struct Buffer {
        std::ostringstream format;
        std::string line;
    };
    //! A thread's unfinished text on both streams.
    struct Buffers {
        Buffer out, err;
    };

private:
    RCPPSPOOL_HIDDEN Buffer& buffer() const
    {
        static thread_local Buffers* const mine =
            engine::runtime::threadState<Buffers, engine::runtime::ThreadSlot::printBuffers>();
        return stream_ == host::Stream::out ? mine->out : mine->err;
    }

    // R's main thread writes at once (the host keeps other threads' lines out
    // of its unfinished line). Other threads hand over what is complete: up to
    // the last newline or carriage return, or everything when flushing.
    void commit(Buffer& b, bool flush) const
    {
        std::string piece = b.format.str();
        b.format.str(std::string());
        if (host::isOutputThread()) {
            host::writeFromMain(stream_, piece);
            return;
        }
        // How much of the piece completes the thread's line (none: keep it).
        const std::size_t lineEnd = piece.find_last_of("\r\n");
        const std::size_t cut = flush ? piece.size() : lineEnd == std::string::npos ? 0 : lineEnd + 1;
        if (cut == 0 && !flush) {
            b.line += piece;
            return;
        }
        if (b.line.empty()) {
            if (cut == piece.size()) {
                if (cut > 0) host::deliverLines(stream_, piece);  // the usual case: no copy
                return;
            }
            host::deliverLines(stream_, piece.substr(0, cut));
        } else {
            b.line.append(piece, 0, cut);
            host::deliverLines(stream_, b.line);
            b.line.clear();
        }
        b.line.append(piece, cut, std::string::npos);
    }

    host::Stream stream_;
};

//! RcppThread's name for the type of Rcerr (the same type here).
using RErrPrinter = RPrinter;

#ifndef RCPPSPOOL_RCOUT_DEFINED
#define RCPPSPOOL_RCOUT_DEFINED
//! Like std::cout (Rprintf in R), usable from any thread.
RCPPSPOOL_HIDDEN inline RPrinter Rcout(host::Stream::out);
//! Like std::cerr (REprintf in R), usable from any thread.
RCPPSPOOL_HIDDEN inline RPrinter Rcerr(host::Stream::err);
#endif

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
