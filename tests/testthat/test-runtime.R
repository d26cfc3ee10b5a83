# One runtime per R process (inst/include/RcppSpool/table/api_table.h,
# engine/thread_lender.h, src/runtime_owner.h). Throwaway client packages,
# built with R CMD INSTALL against the installed headers, against a copy of
# them whose runtime classes have another layout (same ABI number), and
# against the headers of ABI 10 (tests/testthat/fixtures: the last release
# before clients reached the runtime through its table only), loaded
# together in child R processes:
#   - two packages with `Imports: RcppSpool` run on the runtime's one global
#     pool (its workers counted in /proc/self/task), one output queue and
#     one interrupt;
#   - package A's loop whose body calls package B's loop never runs more than
#     availableCores() bodies at once;
#   - a package built against headers whose runtime classes changed layout
#     under the same ABI number (spoolS) runs its loops, tasks and host calls
#     on the one runtime, in either load order;
#   - a package of ABI 10 (spoolV2) borrows RcppSpool's workers and shares
#     its interrupt and output queue, in either load order, nested both ways,
#     and in forked children; one that RcppSpool does not lend to (spoolV3
#     asks for a lender table of version 99) keeps its own runtime and says
#     so; all give right results;
#   - a package built against the headers of ABI 12 (spool12: table version
#     5, a TaskGroup that held the runtime's group state in itself) runs its
#     tasks and groups on this runtime beside a package of these headers;
#   - a package with LinkingTo only (spoolL) uses the runtime if RcppSpool's
#     namespace was loaded first, else loads it at its first call;
#   - no client exports an RcppSpool symbol with GNU unique binding.

skip_on_cran()
skip_on_os("windows")
skip_if_not_installed("callr")
skip_if_not_installed("processx")
skip_if_not(nzchar(base::system.file("include", "RcppSpool.h", package = "RcppSpool")),
            "RcppSpool is not installed")

# (Two parts: sprintf() takes formats of at most 8192 bytes, and only the
# first names the package.)
client_code <- function(name) {
  paste0(sprintf(r"--(
#include <Rcpp.h>
#include <RcppSpool.h>
#include <R_ext/Rdynload.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {
std::atomic<int> active{0}, maxActive{0};
void enter()
{
    int a = ++active;
    int m = maxActive.load();
    while (a > m && !maxActive.compare_exchange_weak(m, a)) {}
}
}  // namespace

// What the other package calls from inside its own loops: a nested loop of
// n bodies of `ms` milliseconds each, counted as active while they run.
extern "C" double %1$s_inner(int n, double ms)
{
    std::atomic<long> sum{0};
    RcppSpool::parallelFor(0, n, [&](std::ptrdiff_t i) {
        enter();
        std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(ms * 1000)));
        RcppSpool::checkUserInterrupt();
        sum += i;
        --active;
    });
    return static_cast<double>(sum.load());
}

// [[Rcpp::init]]
void %1$s_register(DllInfo* dll)
{
    (void)dll;
    R_RegisterCCallable("%1$s", "inner", reinterpret_cast<DL_FUNC>(&%1$s_inner));
}

// Where this package's global pool is: the runtime's (a client of its
// table, since ABI 11: the pool is known by its handle), or, built against
// older headers, a pool of its own that shares the runtime's state or
// borrows its workers.
// [[Rcpp::export]]
Rcpp::List info()
{
#if RCPPSPOOL_ABI_VERSION >= 11
    const bool shared = true, borrowed = false;
    const void* pool = RcppSpool::ThreadPool::globalInstance().handle();
#else
    const bool shared = RcppSpool::engine::runtime::usesSharedRuntime();
    const bool borrowed = RcppSpool::engine::runtime::borrowsThreads();
    const void* pool = &RcppSpool::ThreadPool::globalInstance();
#endif
    return Rcpp::List::create(
        Rcpp::Named("shared") = shared, Rcpp::Named("borrowed") = borrowed,
        Rcpp::Named("abi") = RCPPSPOOL_ABI_VERSION,
        Rcpp::Named("pool") = std::to_string(reinterpret_cast<std::uintptr_t>(pool)),
        Rcpp::Named("workers") = static_cast<double>(RcppSpool::ThreadPool::globalInstance().getNumThreads()));
}

// [[Rcpp::export]]
double sumLoop(int n)
{
    return RcppSpool::parallelReduce(0, n, 0.0, [](std::ptrdiff_t i) { return double(i); }, std::plus<double>());
}

// sumLoop() on a thread of its own; an error's message instead of a sum.
// [[Rcpp::export]]
Rcpp::RObject sumLoopOnThread(int n)
{
    double sum = 0;
    std::string error;
    std::thread t([&] {
        try {
            sum = sumLoop(n);
        } catch (std::exception& e) {
            error = e.what();
        }
    });
    t.join();
    if (!error.empty()) return Rcpp::wrap(error);
    return Rcpp::wrap(sum);
}

// The other package's loop inside each iteration of ours.
// [[Rcpp::export]]
Rcpp::List outer(std::string other, int nOuter, int nInner, double ms)
{
    using Inner = double (*)(int, double);
    Inner inner = reinterpret_cast<Inner>(R_GetCCallable(other.c_str(), "inner"));
    std::atomic<double> total{0};
    maxActive = 0;
    RcppSpool::parallelFor(0, nOuter, [&](std::ptrdiff_t) {
        double s = inner(nInner, ms);
        double t = total.load();
        while (!total.compare_exchange_weak(t, t + s)) {}
    });
    using InnerMax = int (*)();
    InnerMax innerMax = reinterpret_cast<InnerMax>(R_GetCCallable(other.c_str(), "maxActive"));
    return Rcpp::List::create(Rcpp::Named("total") = total.load(), Rcpp::Named("maxActive") = innerMax());
}

extern "C" int %1$s_maxActive() { return maxActive.load(); }

// What the other package calls from its loop bodies: a nested loop whose
// bodies each hand a call to R's main thread and wait for it.
extern "C" double %1$s_innerMain(int n)
{
    std::atomic<long> sum{0};
    RcppSpool::parallelFor(0, n, [&](std::ptrdiff_t i) {
        sum += RcppSpool::onMainThread([i] { return static_cast<long>(Rf_length(Rf_ScalarInteger(1))) + static_cast<long>(i); }).get();
    });
    return static_cast<double>(sum.load());
}
// [[Rcpp::init]]
void %1$s_register3(DllInfo* dll)
{
    (void)dll;
    R_RegisterCCallable("%1$s", "innerMain", reinterpret_cast<DL_FUNC>(&%1$s_innerMain));
}

// The other package's loop of main-thread calls inside each iteration of ours.
// [[Rcpp::export]]
double outerMain(std::string other, int nOuter, int nInner)
{
    using Inner = double (*)(int);
    Inner inner = reinterpret_cast<Inner>(R_GetCCallable(other.c_str(), "innerMain"));
    std::atomic<long> total{0};
    RcppSpool::parallelFor(0, nOuter, [&](std::ptrdiff_t) { total += static_cast<long>(inner(nInner)); });
    return static_cast<double>(total.load());
}
// [[Rcpp::init]]
void %1$s_register2(DllInfo* dll)
{
    (void)dll;
    R_RegisterCCallable("%1$s", "maxActive", reinterpret_cast<DL_FUNC>(&%1$s_maxActive));
}

// A line printed by a worker of the global pool; nobody waits for it here.
// [[Rcpp::export]]
void printLater(std::string text)
{
    RcppSpool::push([text] { RcppSpool::Rcout << text << "\n"; });
}

// The host's services from loop bodies: lines printed by workers (each
// built by several <<), a progress counter drawn by R's main thread while it
// waits, interrupt checks.
// [[Rcpp::export]]
double hostCalls(int n)
{
    std::atomic<long> sum{0};
    RcppSpool::ProgressCounter progress(static_cast<std::size_t>(n), 0.001, "progress: ");
    RcppSpool::parallelFor(0, n, [&](std::ptrdiff_t i) {
        RcppSpool::checkUserInterrupt();
        RcppSpool::Rcout << "line " << i << " of " << n << "\n";
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        sum += static_cast<long>(i) + 1;
        ++progress;
    });
    return static_cast<double>(sum.load());
}

)--", name), r"--(
// fib(n) with a task per call kept in `auto`: on a worker, get() takes its
// task back through the table (futureTakeBack) and runs the call itself.
long fibTasks(int n)
{
    if (n < 2) return n;
    auto x = RcppSpool::async([n] { return fibTasks(n - 1); });
    const long y = fibTasks(n - 2);
    return x.get() + y;
}

// fib(n) with a TaskGroup a call: one task (which the group keeps where no
// thief could take it) or two (the group opens: its state is the runtime's).
long fibGroup(int n, bool two)
{
    if (n < 2) return n;
    long x = 0, y = 0;
    RcppSpool::TaskGroup g;
    g.run([&x, n, two] { x = fibGroup(n - 1, two); });
    if (two)
        g.run([&y, n, two] { y = fibGroup(n - 2, two); });
    else
        y = fibGroup(n - 2, two);
    g.wait();
    return x + y;
}

// The task layer, all of it through the runtime's handles: async() and its
// Futures, a recursion of tasks taken back by their getters, TaskGroups (a
// recursion of them, one opened by cancel() alone), a pool of its own
// (push, pushReturn, a loop nobody blocks on, wait), calls for R's main
// thread from loop bodies, a task's error rethrown by wait().
// Sum: 5 * n(n - 1)/2 + 2n + 2 + 3 fib(18) (3 * 2584).
// [[Rcpp::export]]
double taskCalls(int n)
{
    double total = static_cast<double>(RcppSpool::async([] { return fibTasks(18); }).get());
    total += static_cast<double>(RcppSpool::async([] { return fibGroup(18, false) + fibGroup(18, true); }).get());
    {
        RcppSpool::TaskGroup cancelled;
        cancelled.cancel();
        if (cancelled.isCancelled()) total += 1;
        cancelled.wait();
    }
    std::vector<RcppSpool::Future<long>> fs;
    for (int i = 0; i < n; ++i) fs.push_back(RcppSpool::async([i] { return static_cast<long>(i); }));
    for (auto& f : fs) total += static_cast<double>(f.get());
    std::atomic<long> g{0};
    RcppSpool::TaskGroup group;
    for (int i = 0; i < n; ++i) group.run([&g, i] { g += i; });
    group.wait();
    total += static_cast<double>(g.load());
    RcppSpool::ThreadPool pool(2);
    std::atomic<long> p{0};
    for (int i = 0; i < n; ++i) pool.push([&p, i] { p += i; });
    auto r = pool.pushReturn([n] { return static_cast<long>(n); });
    pool.parallelFor(0, n, [&p](std::ptrdiff_t i) { p += static_cast<long>(i); });
    pool.wait();
    total += static_cast<double>(p.load() + r.get());
    std::atomic<long> m{0};
    RcppSpool::parallelFor(0, n, [&m](std::ptrdiff_t i) {
        m += RcppSpool::onMainThread([i] { return static_cast<long>(Rf_length(Rf_ScalarInteger(1))) + static_cast<long>(i); }).get();
    });
    total += static_cast<double>(m.load());
    try {
        pool.push([] { throw std::runtime_error("a task failed"); });
        pool.wait();
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()) == "a task failed") total += 1;
    }
    return total;
}

// R's main thread waits about `ms` milliseconds in a blocking call.
// [[Rcpp::export]]
void waitAWhile(double ms)
{
    RcppSpool::parallelFor(0, 2, [ms](std::ptrdiff_t) {
        std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(ms * 1000)));
    }, 2);
}
)--")
}

# What the clients' taskCalls(n) returns (see its comment in client_code()).
task_calls_sum <- function(n) 5 * sum(0:(n - 1)) + 2 * n + 2 + 3 * 2584

# (The child code below reaches the throwaway packages with asNamespace():
# R CMD check would take `pkg::f` for undeclared dependencies of the tests.)

# Writes package `name` into `dir`; `include` is put before the installed
# headers (another version of them).
# `imports`: FALSE for a package with `LinkingTo: RcppSpool` only.
write_client <- function(dir, name, include = NULL, imports = TRUE) {
  pkg <- file.path(dir, name)
  dir.create(file.path(pkg, "src"), recursive = TRUE)
  dir.create(file.path(pkg, "R"))
  writeLines(c(paste("Package:", name), "Version: 0.1", "Title: Throwaway client of RcppSpool",
               "Description: Built by RcppSpool's tests.", "License: MIT",
               if (imports) "Imports: Rcpp, RcppSpool" else "Imports: Rcpp", "LinkingTo: Rcpp, RcppSpool"),
             file.path(pkg, "DESCRIPTION"))
  writeLines(c(sprintf("useDynLib(%s, .registration = TRUE)", name), "importFrom(Rcpp, evalCpp)",
               if (imports) "import(RcppSpool)", "export(info, sumLoop, sumLoopOnThread, outer, outerMain, printLater, waitAWhile, hostCalls, taskCalls)"),
             file.path(pkg, "NAMESPACE"))
  writeLines(c("CXX_STD = CXX17",
               if (!is.null(include)) paste0("PKG_CPPFLAGS = -I", include)),
             file.path(pkg, "src", "Makevars"))
  writeLines(client_code(name), file.path(pkg, "src", "client.cpp"))
  Rcpp::compileAttributes(pkg)
  pkg
}

# A copy of the installed headers with a member more at the front of the
# runtime's classes (Scheduler, the runtime's Pool, Context, the host's
# queues and registry) and of ThreadPool, under the same ABI number: what a
# package built against a later release that changed the runtime's classes
# (and had no reason to bump the number) has.
other_layout_headers <- function(dir, name = "include-same-abi") {
  inc <- file.path(dir, name)
  dir.create(inc)
  file.copy(base::system.file("include", package = "RcppSpool"), inc, recursive = TRUE)
  inc <- file.path(inc, "include")
  edit <- function(file, from, to) {
    path <- file.path(inc, "RcppSpool", file)
    x <- readLines(path)
    hit <- grep(from, x, fixed = TRUE)[1]
    stopifnot(!is.na(hit))
    x[hit] <- paste(x[hit], to)
    writeLines(x, path)
  }
  edit("engine/scheduler.h", "class Scheduler {", "\n    char addedLater_[4096] = {};")
  edit("runtime/pool.h", "class Pool {", "\n    char addedLater_[256] = {};")
  edit("thread_pool.h", "class ThreadPool {", "\n    char addedLater_[256] = {};")
  edit("engine/context.h", "class Context {", "\n    char addedLater_[64] = {};")
  edit("host/output_queue.h", "class OutputQueue {", "\n    char addedLater_[128] = {};")
  edit("host/main_calls.h", "class MainCallQueue {", "\n    char addedLater_[128] = {};")
  edit("runtime/progress_registry.h", "class Registry {", "\n    char addedLater_[128] = {};")
  inc
}

# abi10_headers(): helper-abi10.R.

build_clients <- function() {
  dir <- tempfile("clients")
  lib <- file.path(dir, "lib")
  dir.create(lib, recursive = TRUE)
  pkgs <- c(write_client(dir, "spoolA"), write_client(dir, "spoolB"),
            write_client(dir, "spoolV2", include = abi10_headers(dir, "include-v2")),
            write_client(dir, "spoolV3", include = abi10_headers(dir, "include-v3", lender_version = 99L)),
            write_client(dir, "spoolL", imports = FALSE),
            write_client(dir, "spoolS", include = other_layout_headers(dir)),
            write_client(dir, "spool12", include = abi12_headers(dir, "include-abi12")))
  # Two installs at a time (2 cores).
  run_install <- function(pkg) {
    processx::process$new(file.path(R.home("bin"), "R"),
                          c("CMD", "INSTALL", "--no-test-load", paste0("--library=", lib), pkg),
                          stdout = "|", stderr = "2>&1",
                          env = c("current", R_LIBS = paste(c(lib, .libPaths()), collapse = ":")))
  }
  logs <- list()
  for (batch in list(pkgs[1:2], pkgs[3:4], pkgs[5:6], pkgs[7])) {
    ps <- lapply(batch, run_install)
    for (k in seq_along(ps)) {
      ps[[k]]$wait(300000)
      logs[[basename(batch[k])]] <- ps[[k]]$read_all_output()
      if (ps[[k]]$get_exit_status() != 0) stop("R CMD INSTALL ", basename(batch[k]), " failed:\n", logs[[basename(batch[k])]])
    }
  }
  lib
}

lib <- build_clients()
child_lib <- c(lib, .libPaths())

test_that("a client package exports no RcppSpool symbol with GNU unique binding", {
  skip_if(Sys.which("nm") == "", "nm is not available")
  for (p in c("spoolA", "spoolV2", "spoolV3")) {
    so <- file.path(lib, p, "libs", paste0(p, .Platform$dynlib.ext))
    syms <- system2("nm", c("-DC", shQuote(so)), stdout = TRUE)
    unique_ours <- grep(" u .*RcppSpool", syms, value = TRUE)
    expect_identical(unique_ours, character(), info = p)
    # and a sanity check that nm read the library at all
    expect_gt(length(syms), 10)
  }
  so <- base::system.file("libs", paste0("RcppSpool", .Platform$dynlib.ext), package = "RcppSpool")
  expect_identical(grep(" u .*RcppSpool", system2("nm", c("-DC", shQuote(so)), stdout = TRUE), value = TRUE),
                   character())
})

test_that("two packages run on the runtime's one pool, one output queue and its workers", {
  res <- callr::r(function() {
    threads <- function() length(list.files("/proc/self/task"))
    before <- threads()
    a <- asNamespace("spoolA")$info(); b <- asNamespace("spoolB")$info()
    sa <- asNamespace("spoolA")$sumLoop(100000L); sb <- asNamespace("spoolB")$sumLoop(100000L)
    after_both <- threads()
    own <- RcppSpool:::.spool_runtime_info()
    # A worker line of package B, released while package A's main thread waits.
    out <- utils::capture.output({ asNamespace("spoolB")$printLater("from a worker of B"); asNamespace("spoolA")$waitAWhile(200) })
    list(a = a, b = b, own = own, sa = sa, sb = sb, before = before, after = after_both, out = out,
         cores = as.integer(RcppSpool::availableCores()))
  }, libpath = child_lib)
  expect_true(res$a$shared)
  expect_true(res$b$shared)
  expect_identical(res$a$pool, res$b$pool)
  expect_identical(res$a$pool, res$own$pool)
  expect_equal(res$sa, sum(as.numeric(0:99999)))
  expect_equal(res$sb, sum(as.numeric(0:99999)))
  # One set of workers, the global pool's, started once for both packages.
  expect_equal(res$after - res$before, res$a$workers)
  expect_equal(res$a$workers, res$cores)
  expect_identical(res$out, "from a worker of B")
})

test_that("package A's loop calling package B's loop never runs more than availableCores() bodies at once", {
  res <- callr::r(function() {
    other <- "spoolB"  # (a variable: see the note on asNamespace() above)
    loadNamespace(other)
    r <- asNamespace("spoolA")$outer("spoolB", 8L, 20L, 1)
    r$cores <- as.integer(RcppSpool::availableCores())
    r
  }, libpath = child_lib)
  expect_equal(res$total, 8 * sum(0:19))
  expect_lte(res$maxActive, res$cores)
  expect_gte(res$maxActive, 1)
})

# A real SIGINT to a child R process while package `inner`'s loop runs in the
# body of spoolA's loop: the call ends within 0.5 s, and `inner` works after.
expect_interrupt_ends_nested_loop <- function(inner) {
  p <- start_child_r(c(
    sprintf(".libPaths(c(%s))", paste(deparse(child_lib), collapse = "")),
    sprintf("loadNamespace('%s')", inner),
    "cat('@@READY\\n')",
    "t0 <- NA",
    sprintf("r <- tryCatch(spoolA::outer('%s', 1000L, 100L, 5), interrupt = function(e) { t0 <<- Sys.time(); 'interrupt' })", inner),
    "cat(sprintf('@@RESULT %s %.6f\\n', r, as.numeric(t0)))",
    sprintf("cat(sprintf('@@NEXT %%s\\n', %s::sumLoop(1000L) == sum(0:999)))", inner)
  ))
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  wait_for_line(p, "@@READY", timeout = 60)
  Sys.sleep(1)
  sent <- as.numeric(Sys.time())
  p$interrupt()
  lines <- wait_for_line(p, "@@NEXT", timeout = 30)
  result <- strsplit(grep("@@RESULT", lines, value = TRUE), " ")[[1]]
  expect_identical(result[2], "interrupt", info = inner)
  expect_lt(as.numeric(result[3]) - sent, 0.5, label = paste("seconds to end", inner, "'s loop"))
  expect_match(grep("@@NEXT", lines, value = TRUE), "TRUE", info = inner)
}

test_that("Ctrl-C during B's loop called from A's loop body ends the call within 0.5 s", {
  expect_interrupt_ends_nested_loop("spoolB")
})

test_that("a package built against headers of ABI 10 borrows RcppSpool's workers, in either load order", {
  for (order in list(c("spoolA", "spoolV2"), c("spoolV2", "spoolA"))) {
    what <- paste(order, collapse = " then ")
    res <- callr::r(function(order) {
      threads <- function() length(list.files("/proc/self/task"))
      before <- threads()
      msgs <- utils::capture.output(for (p in order) loadNamespace(p), type = "message")
      a <- asNamespace("spoolA")$info(); v2 <- asNamespace("spoolV2")$info()
      sa <- asNamespace("spoolA")$sumLoop(50000L); sv <- asNamespace("spoolV2")$sumLoop(50000L)
      # Two bodies of 300 ms: on two threads if V2 got a worker.
      t0 <- Sys.time(); asNamespace("spoolV2")$waitAWhile(300); took <- as.numeric(Sys.time() - t0, units = "secs")
      after <- threads()
      # A worker line of V2, released while A's main thread waits: one output queue.
      out <- utils::capture.output({ asNamespace("spoolV2")$printLater("from a worker of V2"); asNamespace("spoolA")$waitAWhile(200) })
      # Forked children (mclapply) of a process whose workers V2 borrowed: V2's loops run inline there.
      forked <- unlist(parallel::mclapply(1:2, function(i) asNamespace("spoolV2")$sumLoop(1000L), mc.cores = 2))
      list(a = a, v2 = v2, msgs = msgs, sa = sa, sv = sv, took = took, before = before, after = after,
           forked = forked, out = out, own = RcppSpool:::.spool_runtime_info(), cores = as.integer(RcppSpool::availableCores()))
    }, list(order), libpath = child_lib)
    expect_true(res$a$shared, info = what)
    expect_false(res$v2$shared, info = what)
    expect_true(res$v2$borrowed, info = what)
    expect_false(res$a$borrowed, info = what)
    expect_equal(res$v2$abi, 10L)
    expect_identical(res$a$pool, res$own$pool)
    expect_false(identical(res$v2$pool, res$own$pool))
    expect_equal(res$v2$workers, res$cores)
    expect_equal(res$sa, sum(as.numeric(0:49999)))
    expect_equal(res$sv, sum(as.numeric(0:49999)))
    # One set of workers in the process: RcppSpool's.
    expect_equal(res$after - res$before, res$cores, info = what)
    if (res$cores > 1) expect_lt(res$took, 0.55, label = paste("two 300 ms bodies of V2 took", res$took, "s;", what))
    expect_identical(res$msgs, character(), info = what)
    expect_equal(res$forked, rep(sum(0:999), 2), info = what)
    expect_identical(res$out, "from a worker of V2", info = what)
  }
})

test_that("loops of packages of ABI 10 and of this ABI called in each other's bodies run no more than availableCores() bodies", {
  res <- callr::r(function() {
    threads <- function() length(list.files("/proc/self/task"))
    before <- threads()
    for (p in c("spoolV2", "spoolA")) loadNamespace(p)  # (a variable: see the note on asNamespace() above)
    r1 <- asNamespace("spoolA")$outer("spoolV2", 8L, 20L, 1)
    r2 <- asNamespace("spoolV2")$outer("spoolA", 8L, 20L, 1)
    list(r1 = r1, r2 = r2, added = threads() - before, cores = as.integer(RcppSpool::availableCores()))
  }, libpath = child_lib)
  for (r in list(res$r1, res$r2)) {
    expect_equal(r$total, 8 * sum(0:19))
    expect_lte(r$maxActive, res$cores)
    expect_gte(r$maxActive, 1)
  }
  expect_equal(res$added, res$cores)
})

test_that("calls for R's main thread made in one package's loop inside another's run, whatever their ABI versions", {
  res <- callr::r(function() {
    for (p in c("spoolA", "spoolB", "spoolV2")) loadNamespace(p)  # (a variable: see the note on asNamespace() above)
    list(ab = asNamespace("spoolA")$outerMain("spoolB", 4L, 10L),
         av2 = asNamespace("spoolA")$outerMain("spoolV2", 4L, 10L),
         v2a = asNamespace("spoolV2")$outerMain("spoolA", 4L, 10L))
  }, libpath = child_lib, timeout = 120)
  # Each inner body returns 1 + i: 4 outer iterations x (10 + 45).
  expect_equal(res$ab, 220)
  expect_equal(res$av2, 220)
  expect_equal(res$v2a, 220)
})

test_that("Ctrl-C during the loop of a package of ABI 10, called from A's loop body, ends the call within 0.5 s", {
  expect_interrupt_ends_nested_loop("spoolV2")
})

test_that("a package of ABI 10 that RcppSpool does not lend to keeps a runtime of its own, in either load order, and says so", {
  for (order in list(c("spoolA", "spoolV3"), c("spoolV3", "spoolA"))) {
    what <- paste(order, collapse = " then ")
    res <- callr::r(function(order) {
      msgs <- utils::capture.output(for (p in order) loadNamespace(p), type = "message")
      a <- asNamespace("spoolA")$info(); v3 <- asNamespace("spoolV3")$info()
      list(a = a, v3 = v3, msgs = msgs,
           sa = asNamespace("spoolA")$sumLoop(50000L), sv = asNamespace("spoolV3")$sumLoop(50000L),
           own = RcppSpool:::.spool_runtime_info())
    }, list(order), libpath = child_lib)
    expect_true(res$a$shared, info = what)
    expect_false(res$v3$shared, info = what)
    expect_false(res$v3$borrowed, info = what)
    expect_equal(res$v3$abi, 10L)
    expect_identical(res$a$pool, res$own$pool)
    expect_false(identical(res$v3$pool, res$own$pool))
    expect_gt(res$v3$workers, 0)
    expect_equal(res$sa, sum(as.numeric(0:49999)))
    expect_equal(res$sv, sum(as.numeric(0:49999)))
    expect_true(any(grepl("ABI version 10", res$msgs)), info = paste(res$msgs, collapse = "\n"))
  }
})

test_that("a package built against runtime classes of another layout, with the same ABI number, runs on the one runtime", {
  # spoolS's Scheduler, runtime Pool, ThreadPool and Context have a member
  # more than the installed runtime's, under the same ABI number. Its loops
  # (parallelFor, parallelReduce, nested in spoolA's loops and the other way
  # round) are the runtime's code, reached through the table of
  # table/api_table.h: they touch none of those layouts, in either load
  # order, with one set of workers. So are the host's services (its output
  # queue, main-thread queue and progress registry have a member more too):
  # lines printed by its loop bodies, a progress counter. So is the task
  # layer: async() and Futures, a TaskGroup, a ThreadPool of its own and its
  # detached loop, onMainThread() from loop bodies, a task's error.
  for (order in list(c("spoolS", "spoolA"), c("spoolA", "spoolS"))) {
    res <- callr::r(function(order) {
      threads <- function() length(list.files("/proc/self/task"))
      loadNamespace("RcppSpool")
      before <- threads()
      for (p in order) loadNamespace(p)
      ns <- asNamespace
      list(s = ns("spoolS")$sumLoop(100000L), s_thread = ns("spoolS")$sumLoopOnThread(100000L),
           a = ns("spoolA")$sumLoop(100000L),
           sa = ns("spoolS")$outer("spoolA", 6L, 20L, 0.2), as = ns("spoolA")$outer("spoolS", 6L, 20L, 0.2),
           host_out = utils::capture.output(host <- ns("spoolS")$hostCalls(200L)), host = host,
           added = threads() - before, cores = as.integer(RcppSpool::availableCores()),
           tasks = ns("spoolS")$taskCalls(200L))
    }, args = list(order = order), libpath = child_lib)
    info <- paste(order, collapse = ", ")
    expect_equal(res$s, sum(as.numeric(0:99999)), info = info)
    expect_equal(res$s_thread, sum(as.numeric(0:99999)), info = info)
    expect_equal(res$a, sum(as.numeric(0:99999)), info = info)
    expect_equal(res$sa$total, 6 * sum(0:19), info = info)
    expect_equal(res$as$total, 6 * sum(0:19), info = info)
    expect_lte(res$sa$maxActive, res$cores)
    expect_lte(res$as$maxActive, res$cores)
    expect_equal(res$host, 200 + sum(0:199), info = info)
    # (A progress line, redrawn in place, ends in no newline: a line printed
    # after it shares its line of output.)
    lines <- unlist(regmatches(res$host_out, gregexpr("line [0-9]+ of 200", res$host_out)))
    expect_equal(sort(lines), sort(sprintf("line %d of 200", 0:199)), info = info)
    expect_true(any(grepl("progress: 100% (done)", res$host_out, fixed = TRUE)), info = paste(res$host_out, collapse = "\n"))
    # One set of workers: the runtime's, started for the first loop.
    expect_lte(res$added, res$cores, label = info)
    expect_equal(res$tasks, task_calls_sum(200), info = info)
  }
})

test_that("a package built against the headers of ABI 12 runs its TaskGroups on this runtime, beside one of these headers", {
  # spool12's TaskGroup keeps 256 bytes aligned to 64 for the group's state,
  # which a runtime of table version 5 made there; this runtime (table
  # version 6) makes it elsewhere and writes only the first word (the open
  # mark it reads). Its groups (a recursion with one task a group, kept, and
  # with two, opened; one opened by cancel() alone), futures and pools, in
  # either load order, nested in each other's loops.
  for (order in list(c("spool12", "spoolA"), c("spoolA", "spool12"))) {
    res <- callr::r(function(order) {
      for (p in order) loadNamespace(p)
      ns <- asNamespace
      list(info = ns("spool12")$info(), own = RcppSpool:::.spool_runtime_info(),
           t12 = ns("spool12")$taskCalls(200L), ta = ns("spoolA")$taskCalls(200L),
           t12again = ns("spool12")$taskCalls(50L),
           nested = ns("spool12")$outer("spoolA", 6L, 20L, 0.2), nested2 = ns("spoolA")$outer("spool12", 6L, 20L, 0.2))
    }, args = list(order = order), libpath = child_lib)
    info <- paste(order, collapse = ", ")
    expect_identical(res$info$abi, 12L, info = info)
    expect_true(res$info$shared, info = info)
    expect_identical(res$info$pool, res$own$pool, info = info)
    expect_equal(res$t12, task_calls_sum(200), info = info)
    expect_equal(res$ta, task_calls_sum(200), info = info)
    expect_equal(res$t12again, task_calls_sum(50), info = info)
    expect_equal(res$nested$total, 6 * sum(0:19), info = info)
    expect_equal(res$nested2$total, 6 * sum(0:19), info = info)
  }
})

test_that("a package with LinkingTo only uses the runtime if RcppSpool's namespace is loaded first, else loads it at its first call", {
  res <- callr::r(function() {
    p <- "spoolL"  # (a variable: see the note on asNamespace() above)
    loadNamespace("RcppSpool")
    loadNamespace(p)
    l <- asNamespace(p)$info()
    list(l = l, s = asNamespace(p)$sumLoop(50000L), t = asNamespace(p)$sumLoopOnThread(50000L),
         own = RcppSpool:::.spool_runtime_info())
  }, libpath = child_lib)
  expect_true(res$l$shared)
  expect_identical(res$l$pool, res$own$pool)
  expect_equal(res$s, sum(as.numeric(0:49999)))
  expect_equal(res$t, sum(as.numeric(0:49999)))

  # Loading RcppSpool's namespace while this package's shared library is
  # being loaded would run R code inside dlopen() (under Windows' loader
  # lock): it does not, and says nothing. The package's first call of the
  # runtime (a loop, defaultThreads()) on R's main thread loads it (see
  # client/api.h); a first loop on another thread cannot, and is an error
  # that says what to add, not a crash. After that, loops run on any thread.
  res <- callr::r(function() {
    p <- "spoolL"
    ns <- asNamespace
    msgs <- utils::capture.output({
      loadNamespace(p)
      loaded_at_load <- "RcppSpool" %in% loadedNamespaces()
      first_on_thread <- ns(p)$sumLoopOnThread(50000L)
      l <- ns(p)$info()  # its global pool asks the runtime for defaultThreads(): that loads RcppSpool
      s <- ns(p)$sumLoop(50000L)
      then_on_thread <- ns(p)$sumLoopOnThread(50000L)
    }, type = "message")
    list(l = l, s = s, first_on_thread = first_on_thread, then_on_thread = then_on_thread, msgs = msgs,
         loaded_at_load = loaded_at_load, loaded = "RcppSpool" %in% loadedNamespaces(),
         own = RcppSpool:::.spool_runtime_info())
  }, libpath = child_lib)
  expect_false(res$loaded_at_load)
  expect_true(res$l$shared)
  expect_false(res$l$borrowed)
  expect_identical(res$l$pool, res$own$pool)
  expect_gt(res$l$workers, 0)
  expect_match(res$first_on_thread, "add RcppSpool to Imports", fixed = TRUE)
  expect_true(res$loaded)
  expect_equal(res$s, sum(as.numeric(0:49999)))
  expect_equal(res$then_on_thread, sum(as.numeric(0:49999)))
  expect_identical(res$msgs, character())
})
