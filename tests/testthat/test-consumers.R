# The three ways code uses RcppSpool, each compiled for real in a child R
# process (the package under test lives in the library given by R_LIBS /
# .libPaths(), passed on to the children):
#   (a) Rcpp::sourceCpp() with `// [[Rcpp::depends(RcppSpool)]]`, also next to
#       `// [[Rcpp::plugins(cpp11)]]` as RcppThread code has it;
#   (b) cpp11::cpp_source() with `[[cpp11::linking_to("RcppSpool")]]`;
#   (c) a package with `LinkingTo: RcppSpool`, built with R CMD INSTALL.
# Between them they also use each override macro under both spellings
# (RCPPSPOOL_OVERRIDE_* and RcppThread's RCPPTHREAD_OVERRIDE_*).
# The three compilations are started together at the top and run side by side.

skip_on_cran()
skip_if_not_installed("callr")
skip_if(!nzchar(base::system.file("include", "RcppSpool.h", package = "RcppSpool")),
        "RcppSpool is not installed (sourceCpp, cpp11 and R CMD INSTALL need its headers)")

# Returns conditionMessage() of the error `expr` raises (NA if none).
error_message <- function(expr) tryCatch({ expr; NA_character_ }, error = conditionMessage)

# (a) ---------------------------------------------------------------------

sourcecpp_code <- r"--(
// [[Rcpp::plugins(cpp11)]]
// [[Rcpp::depends(RcppSpool)]]
#define RCPPSPOOL_OVERRIDE_COUT 1
#define RCPPSPOOL_OVERRIDE_CERR
#define RCPPTHREAD_OVERRIDE_THREAD 1
#include <Rcpp.h>
#include <RcppSpool.h>
#include <iostream>  // after the overrides: harmless
#include <thread>
#include <stdexcept>
#include <type_traits>
#include <vector>

#if __cplusplus < 201703L
#error "RcppSpool's sourceCpp plugin did not ask for C++17"
#endif
static_assert(std::is_same<std::thread, RcppSpool::Thread>::value,
              "RCPPTHREAD_OVERRIDE_THREAD: std::thread is RcppSpool::Thread");

// [[Rcpp::export]]
double cplusplus() { return static_cast<double>(__cplusplus); }

// [[Rcpp::export]]
double sumOfSquares(int n, int nThreads)
{
    std::vector<double> x(n);
    RcppSpool::parallelFor(0, n, [&x](std::ptrdiff_t i) { x[i] = double(i) * i; }, nThreads);
    return RcppSpool::parallelReduce(0, n, 0.0, [&x](std::ptrdiff_t i) { return x[i]; },
                                     [](double a, double b) { return a + b; });
}

// std::cout / std::cerr / std::thread in unmodified code: the lines reach R's
// output and message streams, the ids are those of RcppSpool::Thread.
// [[Rcpp::export]]
int legacyThreads(int nThreads)
{
    std::vector<std::thread> threads;
    for (int t = 0; t < nThreads; ++t)
        threads.emplace_back([](int k) { std::cout << "thread " << k << " says hello" << std::endl; }, t);
    std::thread::id first = threads[0].get_id();
    int distinct = 0;
    for (auto& th : threads) distinct += th.get_id() != std::thread::id() ? 1 : 0;
    for (auto& th : threads) th.join();
    std::cerr << "to the message stream: " << (first != std::thread::id()) << "\n";
    return distinct;
}

// An exception in a std::thread (RcppSpool::Thread) is rethrown by join().
// [[Rcpp::export]]
void legacyThreadError()
{
    std::thread th([] { throw std::runtime_error("failed inside a std::thread"); });
    th.join();
}
)--"

run_sourcecpp <- function(code) {
  file <- tempfile(fileext = ".cpp")
  writeLines(code, file)
  env <- new.env()
  Rcpp::sourceCpp(file, env = env, cacheDir = tempfile("cache"), rebuild = TRUE)
  res <- list(cplusplus = env$cplusplus(), sum = env$sumOfSquares(1000L, 4L))
  res$stderr <- utils::capture.output(
    res$stdout <- utils::capture.output(res$distinct <- env$legacyThreads(3L)),
    type = "message")
  res$error <- tryCatch({ env$legacyThreadError(); NA_character_ }, error = conditionMessage)
  res
}

# (b) ---------------------------------------------------------------------

cpp11_code <- r"--(
#include <cpp11.hpp>
#define RCPPSPOOL_OVERRIDE_THREAD 1
#define RCPPTHREAD_OVERRIDE_CERR 1
#include <RcppSpool.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef Rcpp_hpp
#error "RcppSpool's headers must not need Rcpp"
#endif
#if __cplusplus < 201703L
#error "not C++17"
#endif

[[cpp11::linking_to("RcppSpool")]]

[[cpp11::register]]
double weighted_sum(cpp11::doubles x, int nThreads)
{
    std::vector<double> in(x.begin(), x.end()), out(in.size());
    RcppSpool::parallelFor(0, static_cast<std::ptrdiff_t>(in.size()), [&](std::ptrdiff_t i) {
        out[i] = in[i] * static_cast<double>(i + 1);
    }, nThreads);
    double s = 0;
    for (double v : out) s += v;
    return s;
}

[[cpp11::register]]
void loop_error(int failAt)
{
    RcppSpool::parallelFor(0, 10000, [failAt](std::ptrdiff_t i) {
        if (i == failAt) throw std::invalid_argument("bad row " + std::to_string(i));
    }, 2);
}

[[cpp11::register]]
double task_error()
{
    RcppSpool::ThreadPool pool(2);
    auto f = pool.pushReturn([] () -> double { throw std::runtime_error("task failed"); });
    return f.get();
}

[[cpp11::register]]
void thread_error()
{
    std::thread th([] { throw std::runtime_error("thread failed"); });
    th.join();
}

[[cpp11::register]]
void warn_from_worker()
{
    RcppSpool::parallelFor(0, 2, [](std::ptrdiff_t i) {
        if (i == 1) std::cerr << "worker note " << i << "\n";
    }, 2);
}
)--"

run_cpp11 <- function(code) {
  file <- tempfile(fileext = ".cpp")
  writeLines(code, file)
  env <- new.env()
  # cpp11 compiles as C++11 unless told otherwise; RcppSpool needs C++17.
  cpp11::cpp_source(file, env = env, cxx_std = "CXX17", quiet = TRUE, dir = tempfile("cpp11"))
  msg <- function(expr) tryCatch({ expr; NA_character_ }, error = conditionMessage)
  x <- seq(0.5, 100, by = 0.5)
  res <- list(
    sum1 = env$weighted_sum(x, 1L), sum4 = env$weighted_sum(x, 4L),
    loop = msg(env$loop_error(7777L)), loop_again = msg(env$loop_error(-1L)),
    task = msg(env$task_error()), thread = msg(env$thread_error())
  )
  res$stderr <- utils::capture.output(
    res$stdout <- utils::capture.output(env$warn_from_worker()), type = "message")
  res
}

# (c) ---------------------------------------------------------------------

# A package with `LinkingTo: RcppSpool`, R's C API only, the Makevars a user
# copies from the documentation. Returns what its functions give.
run_package <- function() {
  root <- tempfile("pkgs")
  pkg <- file.path(root, "spoolconsumer")
  dir.create(file.path(pkg, "R"), recursive = TRUE)
  dir.create(file.path(pkg, "src"))
  writeLines(c(
    "Package: spoolconsumer",
    "Version: 0.0.1",
    "Title: Uses RcppSpool",
    "Description: Throwaway package of the RcppSpool tests.",
    "License: MIT",
    "Authors@R: person('A', 'Tester', email = 'a@example.org', role = c('aut', 'cre'))",
    "LinkingTo: RcppSpool"
  ), file.path(pkg, "DESCRIPTION"))
  writeLines(c("useDynLib(spoolconsumer, .registration = TRUE)", "export(psum, pfail)"),
             file.path(pkg, "NAMESPACE"))
  writeLines(c(
    "psum <- function(x, nThreads) .Call(spool_psum, as.double(x), as.integer(nThreads))",
    "pfail <- function() .Call(spool_pfail)"
  ), file.path(pkg, "R", "psum.R"))
  writeLines(c(
    "CXX_STD = CXX17",
    "PKG_LIBS = `\"$(R_HOME)/bin/Rscript\" -e \"RcppSpool::LdFlags()\"`"
  ), file.path(pkg, "src", "Makevars"))
  writeLines(r"--(
#define RCPPSPOOL_OVERRIDE_COUT 0  // 0: off
#include <RcppSpool.h>
#include <R_ext/Rdynload.h>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>
#ifdef cout
#error "RCPPSPOOL_OVERRIDE_COUT 0 must leave std::cout alone"
#endif

// Runs `f` and turns a C++ exception into an R error. Rf_error() jumps, so it
// is called once nothing with a destructor is left on this frame.
static char errorMessage[1024];
template <class F>
static SEXP guarded(F f)
{
    try {
        return f();
    } catch (const std::exception& e) {
        std::snprintf(errorMessage, sizeof errorMessage, "%s", e.what());
    }
    Rf_error("%s", errorMessage);
    return R_NilValue;
}

extern "C" SEXP spool_psum(SEXP x, SEXP nThreads)
{
    return guarded([&] {
        const double* px = REAL(x);
        const R_xlen_t n = XLENGTH(x);
        double total = RcppSpool::parallelReduce(
            0, n, 0.0, [px](std::ptrdiff_t i) { return px[i] * px[i]; },
            [](double a, double b) { return a + b; }, static_cast<std::size_t>(INTEGER(nThreads)[0]));
        std::vector<double> y(n);
        RcppSpool::ThreadPool pool(2);
        pool.parallelFor(0, n, [px, &y](std::ptrdiff_t i) { y[i] = 2 * px[i]; });
        pool.wait();
        double check = 0;
        for (double v : y) check += v;
        SEXP out = PROTECT(Rf_allocVector(REALSXP, 2));
        REAL(out)[0] = total;
        REAL(out)[1] = check;
        UNPROTECT(1);
        return out;
    });
}

extern "C" SEXP spool_pfail()
{
    return guarded([] {
        RcppSpool::parallelFor(0, 100, [](std::ptrdiff_t i) {
            if (i == 42) throw std::runtime_error("package loop failed at 42");
        });
        return R_NilValue;
    });
}

static const R_CallMethodDef callMethods[] = {
    {"spool_psum", (DL_FUNC) &spool_psum, 2},
    {"spool_pfail", (DL_FUNC) &spool_pfail, 0},
    {NULL, NULL, 0}};

extern "C" void R_init_spoolconsumer(DllInfo* dll)
{
    R_registerRoutines(dll, NULL, callMethods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
}
)--", file.path(pkg, "src", "spoolconsumer.cpp"))

  lib <- file.path(root, "lib")
  dir.create(lib)
  # R_LIBS: R CMD INSTALL finds RcppSpool (LinkingTo) there, and so does the
  # Rscript that Makevars runs for LdFlags().
  libs <- paste(c(lib, .libPaths()), collapse = .Platform$path.sep)
  out <- processx::run(file.path(R.home("bin"), "R"),
                       c("CMD", "INSTALL", "--no-test-load", paste0("--library=", lib), pkg),
                       env = c("current", R_LIBS = libs), error_on_status = FALSE,
                       stderr_to_stdout = TRUE)
  res <- list(status = out$status, log = out$stdout)
  if (out$status != 0) return(res)
  .libPaths(c(lib, .libPaths()))
  # Through a variable: a literal name would make R CMD check look for the
  # throwaway package in the repositories.
  consumer <- "spoolconsumer"
  ns <- loadNamespace(consumer)
  psum <- get("psum", envir = ns)
  pfail <- get("pfail", envir = ns)
  x <- seq_len(100000) / 1000
  res$psum <- psum(x, 3L)
  res$expected <- c(sum(x^2), 2 * sum(x))
  res$error <- tryCatch({ pfail(); NA_character_ }, error = conditionMessage)
  res$ldflags <- grep("-pthread", out$stdout, value = TRUE, fixed = TRUE)
  res
}

# Start all three, then check each.
jobs <- list(
  sourcecpp = start_r_job(run_sourcecpp, list(sourcecpp_code)),
  cpp11 = if (requireNamespace("cpp11", quietly = TRUE)) start_r_job(run_cpp11, list(cpp11_code)),
  package = if (requireNamespace("processx", quietly = TRUE)) start_r_job(run_package)
)

test_that("sourceCpp with depends(RcppSpool) compiles as C++17 even next to plugins(cpp11)", {
  res <- finish_r_job(jobs$sourcecpp)
  expect_gte(res$cplusplus, 201703)
  expect_identical(res$sum, sum(as.numeric(0:999)^2))
})

test_that("the override macros route std::cout, std::cerr and std::thread through RcppSpool", {
  res <- finish_r_job(jobs$sourcecpp)
  # Lines written by std::cout on three std::threads reach R's output, whole.
  expect_identical(res$distinct, 3L)
  expect_setequal(res$stdout, sprintf("thread %d says hello", 0:2))
  # std::cerr goes to R's message stream (REprintf), never to the output.
  expect_identical(res$stderr, "to the message stream: 1")
  # std::thread::join() rethrows the thread's exception (RcppSpool::Thread).
  expect_identical(res$error, "failed inside a std::thread")
})

test_that("cpp11::cpp_source with linking_to(RcppSpool) runs a parallelFor", {
  skip_if(is.null(jobs$cpp11), "cpp11 is not installed")
  res <- finish_r_job(jobs$cpp11)
  x <- seq(0.5, 100, by = 0.5)
  expect_equal(res$sum1, sum(x * seq_along(x)))
  expect_equal(res$sum4, sum(x * seq_along(x)))
  expect_true(is.na(res$loop_again))
  # std::cerr (RCPPTHREAD_OVERRIDE_CERR) written on a worker: message stream only.
  expect_identical(res$stderr, "worker note 1")
  expect_identical(res$stdout, character())
})

test_that("with cpp11, exceptions from loop bodies, tasks and threads reach R with their message", {
  skip_if(is.null(jobs$cpp11), "cpp11 is not installed")
  res <- finish_r_job(jobs$cpp11)
  expect_identical(res$loop, "bad row 7777")
  expect_identical(res$task, "task failed")
  expect_identical(res$thread, "thread failed")
})

test_that("a package with LinkingTo: RcppSpool builds and runs in parallel", {
  skip_if(is.null(jobs$package), "processx is not installed")
  res <- finish_r_job(jobs$package)
  expect_identical(res$status, 0L, info = paste(res$log, collapse = "\n"))
  expect_equal(res$psum, res$expected)
  expect_identical(res$error, "package loop failed at 42")
  # The link line carries what LdFlags() printed.
  if (.Platform$OS.type != "windows") expect_gt(length(res$ldflags), 0)
})

test_that("LdFlags() prints the flags it returns, for backticks in Makevars", {
  printed <- utils::capture.output(flags <- withVisible(RcppSpool::LdFlags()))
  expect_false(flags$visible)
  expect_identical(printed, flags$value)
  if (.Platform$OS.type == "windows") {
    expect_identical(flags$value, "")
  } else {
    expect_match(flags$value, "^-pthread( -latomic)?$")
  }
})
