// The ABI version of the headers, and how their process-wide state is kept
// apart from other packages' copies of it.
//
// A user's R session loads many packages that compiled these headers, each
// against its own version of them. Two rules keep them from sharing anything
// by accident (with g++ on Linux, an inline function's static is exported
// with GNU unique binding, and the dynamic loader would bind every package to
// the first copy loaded, whatever its layout):
//   - everything is declared in the inline namespace RcppSpool::RCPPSPOOL_ABI
//     (abi1, abi2, ...), so that code of two versions never has the same
//     mangled names: neither their objects nor their inline functions can be
//     merged or interposed. Bump RCPPSPOOL_ABI_VERSION whenever the layout
//     or the protocol of anything shared between packages changes, and
//     whenever the layout of a type with out-of-line members changes (a
//     client exports those members, and the dynamic loader would bind
//     another package's calls to them).
//   - functions and variables that hold process-wide or thread-local state
//     are marked RCPPSPOOL_HIDDEN: each shared object keeps its own, and none
//     is exported. (Types stay visible: a user's class may derive from or
//     hold ours without warnings about visibility.)
#pragma once

#define RCPPSPOOL_ABI_VERSION 13

#define RCPPSPOOL_CAT_(a, b) a##b
#define RCPPSPOOL_CAT(a, b) RCPPSPOOL_CAT_(a, b)
//! The name of the inline namespace of this ABI version: abi1, abi2, ...
#define RCPPSPOOL_ABI RCPPSPOOL_CAT(abi, RCPPSPOOL_ABI_VERSION)

// Windows DLLs export nothing unless asked, and mingw's g++ warns about the
// attribute; elsewhere (ELF, Mach-O) it keeps a symbol out of the dynamic table.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(_WIN32) && !defined(__CYGWIN__)
#define RCPPSPOOL_HIDDEN __attribute__((visibility("hidden")))
#else
#define RCPPSPOOL_HIDDEN
#endif

//! On a function of the runtime's fast path that holds a task record (an
//! array of 48 bytes) in its frame: no stack-protector canary there. R
//! builds packages with -fstack-protector-strong (Debian's flags, and most
//! distributions'), which guards every function with a local array: 5
//! instructions a call, on a spawn's path several times. Only for functions
//! that run no code of a user's inline (a task's callable is reached through
//! its op, compiled, and guarded, in the client).
#if defined(__has_attribute)
#if __has_attribute(no_stack_protector)
#define RCPPSPOOL_NO_STACK_PROTECTOR __attribute__((no_stack_protector))
#endif
#endif
#if !defined(RCPPSPOOL_NO_STACK_PROTECTOR)
#define RCPPSPOOL_NO_STACK_PROTECTOR
#endif
