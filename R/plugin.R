#' Linker flags for packages using RcppSpool
#'
#' RcppSpool's headers need the platform's thread library, and, on the few
#' platforms whose compiler does not inline every atomic operation (e.g.
#' RISC-V with older GCC), `libatomic`. In a package's `src/Makevars`, write
#' ``PKG_LIBS = `"$(R_HOME)/bin/Rscript" -e "RcppSpool::LdFlags()"` ``
#' (as with RcppThread), together with `CXX_STD = CXX17`.
#'
#' Whether `-latomic` is needed is found out once per R session by compiling
#' and linking a small program with R's C++17 compiler.
#'
#' @return The flags, invisibly; they are printed (without a newline) so that
#'   the backticks in Makevars pick them up.
#' @export
#' @examples
#' LdFlags()
LdFlags <- function() {
  flags <- ld_flags()
  cat(flags)
  invisible(flags)
}

# The flags themselves: "-pthread", plus "-latomic" where atomics need it;
# nothing on Windows (R's toolchain links winpthreads by itself).
ld_flags <- function() {
  if (.Platform$OS.type == "windows") return("")
  if (needs_libatomic()) "-pthread -latomic" else "-pthread"
}

# Results that cost a compiler run, kept for the session.
plugin_cache <- new.env(parent = emptyenv())

# TRUE when a program using the atomic operations of RcppSpool's headers
# (1- to 8-byte exchange, compare-exchange, fetch-add) links only with
# -latomic. FALSE when it links without it, or when the probe cannot run
# (then nothing is added, as before the probe existed).
needs_libatomic <- function() {
  if (is.null(plugin_cache$libatomic)) {
    plugin_cache$libatomic <- tryCatch(probe_libatomic(), error = function(e) FALSE)
  }
  plugin_cache$libatomic
}

probe_libatomic <- function() {
  r <- file.path(R.home("bin"), "R")
  config <- function(var) {
    out <- suppressWarnings(system2(r, c("CMD", "config", var), stdout = TRUE, stderr = FALSE))
    if (length(out)) trimws(out[[1]]) else ""
  }
  cxx <- config("CXX17")
  if (!nzchar(cxx)) return(FALSE)
  cxx <- paste(cxx, config("CXX17STD"))
  dir <- tempfile("RcppSpool-atomic")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  src <- file.path(dir, "probe.cpp")
  exe <- file.path(dir, "probe")
  writeLines(c(
    "#include <atomic>",
    "#include <cstdint>",
    "std::atomic<bool> b{false};",
    "std::atomic<unsigned char> c{0};",
    "std::atomic<std::int64_t> w{0};",
    "int main(int argc, char**) {",
    "  bool expected = false;",
    "  b.compare_exchange_strong(expected, argc > 1);",
    "  c.fetch_add(static_cast<unsigned char>(argc));",
    "  w.fetch_add(argc);",
    "  return static_cast<int>(b.exchange(true)) + c.load() + static_cast<int>(w.load());",
    "}"
  ), src)
  links <- function(extra) {
    cmd <- paste(cxx, shQuote(src), "-o", shQuote(exe), "-pthread", extra)
    status <- suppressWarnings(system(cmd, ignore.stdout = TRUE, ignore.stderr = TRUE))
    identical(as.integer(status), 0L)
  }
  !links("") && links("-latomic")
}

# Plugin for Rcpp: `// [[Rcpp::depends(RcppSpool)]]` with Rcpp::sourceCpp(),
# `depends = "RcppSpool"` with Rcpp::cppFunction() / evalCpp().
#
# It asks for C++17 even when the code also names `Rcpp::plugins(cpp11)`, as
# RcppThread code does: R before 4.3 defaults to C++14, and R CMD SHLIB picks
# the newest standard whose USE_CXX* variable is set, so USE_CXX17 wins over
# the USE_CXX11 of the cpp11 plugin. For cppFunction() and evalCpp(), whose
# code has no #include lines of its own, RcppSpool.h is included after
# Rcpp.h (RcppThread's plugin also includes its header), so that the
# Rcpp-aware variant of the headers is used.
inlineCxxPlugin <- function(...) {
  settings <- Rcpp::Rcpp.plugin.maker(
    include.after = "#include <RcppSpool.h>",
    package = "RcppSpool",
    libs = ld_flags()
  )()
  settings$env$USE_CXX17 <- "yes"
  settings
}
