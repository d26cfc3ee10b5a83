#' Migrate a package from RcppThread or RcppParallel to RcppSpool
#'
#' Rewrites the source package in `path` to use RcppSpool instead of
#' RcppThread or RcppParallel, as `vignette("migrating-from-rcppthread")` and
#' `vignette("migrating-from-rcppparallel")` describe. By default it only
#' shows what it would change.
#'
#' What it changes:
#' * C and C++ sources and headers under `src/` and `inst/include/`:
#'   for RcppThread, `RcppThread` becomes `RcppSpool` (the include, the
#'   namespace, `Rcpp::depends()`) and the macros `RCPPTHREAD_*` become
#'   `RCPPSPOOL_*`; for RcppParallel, `#include <RcppParallel.h>` becomes
#'   `#include <RcppSpool/RcppParallel.h>`, `RcppParallel::` and
#'   `using namespace RcppParallel;` name `RcppSpool::RcppParallel`, and
#'   `Rcpp::depends(RcppParallel)` names RcppSpool.
#' * `src/Makevars`, `Makevars.win`, `Makevars.ucrt` and their `.in`
#'   templates: `CXX_STD = CXX17` (added, or raised from an older standard),
#'   and `RcppSpool::LdFlags()` in `PKG_LIBS` where no `LdFlags()` is used.
#'   RcppParallel's and TBB's flags go (`RcppParallelLibs()` becomes
#'   `RcppSpool::LdFlags()`; `-DRCPP_PARALLEL_USE_TBB=1`, `-ltbb`, the
#'   `RCPPPARALLEL_*` variables and the paths made of them are removed). A
#'   package with `src/` and no Makevars gets `src/Makevars` and
#'   `src/Makevars.win`. Other files of `src/` named `Makevars*` or
#'   `Makefile*`, and the `configure` and `cleanup` scripts, get the renaming.
#' * `R/` files: RcppThread's names become RcppSpool's (RcppSpool has
#'   `detectCores()` and `LdFlags()`); `RcppParallel::setThreadOptions()` and
#'   `defaultNumThreads()` become RcppSpool's, and the roxygen tag
#'   `@importFrom RcppParallel RcppParallelLibs` becomes
#'   `@importFrom RcppSpool availableCores`.
#' * `DESCRIPTION`: `LinkingTo` names RcppSpool instead of RcppThread or
#'   RcppParallel; `Imports` gets RcppSpool; RcppThread in `Imports` becomes
#'   RcppSpool, and RcppParallel goes from `Imports` unless `R/` or
#'   `NAMESPACE` still use it. The old package's version requirement is
#'   dropped (it does not apply to RcppSpool); RcppSpool is required at the
#'   version running `use_rcppspool()` or later, `RcppSpool (>= x.y.z)` in
#'   `LinkingTo` and `Imports` (and `Depends`, where it is), since a package
#'   built against its headers asks the runtime for that version (a later
#'   requirement already there stays). `SystemRequirements` says
#'   C++17. For RcppThread, `Depends`, `Suggests` and `Enhances` name
#'   RcppSpool too.
#' * `NAMESPACE`: imports of RcppThread become imports of RcppSpool;
#'   `importFrom(RcppParallel, RcppParallelLibs)` goes; without any import of
#'   RcppSpool, `importFrom(RcppSpool, availableCores)` is added, so that
#'   `R CMD check` does not note RcppSpool in `Imports` as unused. When
#'   roxygen2 writes `NAMESPACE`, the changes returned say which tag to put
#'   in an R file, or the next `roxygen2::roxygenise()` drops the line.
#' * `MD5` (of a package unpacked from a tarball) is removed: its checksums
#'   no longer match.
#'
#' Why `Imports`: RcppSpool's runtime (its pool of workers, its output queue,
#' its handling of Ctrl-C) is in RcppSpool's own shared library, which a
#' package's code reaches through RcppSpool's namespace. With `LinkingTo`
#' only, the package works only when its first parallel loop runs on R's main
#' thread, which then loads the namespace; a first loop on another thread
#' stops with an error that asks for `Imports: RcppSpool`.
#'
#' What it leaves: code it cannot migrate (TBB's own names such as
#' `tbb::parallel_sort`, RcppParallel's headers other than `RcppParallel.h`,
#' `RcppThread` or `RcppParallel` still named after the changes, also in
#' `tests/` and `vignettes/`, which it does not change) is named in a warning,
#' file and line, of class `RcppSpool_migration_left` (its field `left` holds
#' the lines). The R code of the package is not run and nothing is compiled.
#' Running it again on a migrated package changes nothing.
#'
#' @param path The package's folder (the one with `DESCRIPTION`).
#' @param from What the package uses now: `"RcppThread"`, `"RcppParallel"`,
#'   both, or `"auto"` (the default), which reads `LinkingTo` in
#'   `DESCRIPTION`. With `"auto"`, a package that already links to RcppSpool
#'   only and neither to RcppThread nor to RcppParallel gets the changes
#'   that do not depend on the old package (`Imports`, `NAMESPACE`, C++17,
#'   `LdFlags()`).
#' @param dry_run `TRUE` (the default): write nothing, print what would
#'   change as a diff per file (lines removed with `-`, added with `+`, two
#'   lines of context). `FALSE`: write the changes.
#' @return One line per change, `"file: what"`, invisibly (also when
#'   `dry_run = TRUE`, for the changes it would make). With `dry_run =
#'   FALSE` they are also shown as a message. Where code was left, its
#'   lines (as in the warning) are the attribute `"left"`.
#' @seealso `vignette("migrating-from-rcppthread")`,
#'   `vignette("migrating-from-rcppparallel")`, [LdFlags()].
#' @md
#' @export
#' @examples
#' # A small package written for RcppThread, in a temporary folder
#' pkg <- file.path(tempdir(), "threaded")
#' dir.create(file.path(pkg, "src"), recursive = TRUE)
#' writeLines(c("Package: threaded", "Version: 0.1",
#'              "LinkingTo: Rcpp, RcppThread"), file.path(pkg, "DESCRIPTION"))
#' writeLines("useDynLib(threaded, .registration = TRUE)",
#'            file.path(pkg, "NAMESPACE"))
#' writeLines(c("#include <Rcpp.h>", "#include <RcppThread.h>",
#'              "// [[Rcpp::export]]",
#'              "void fill(std::vector<double>& x) {",
#'              "  RcppThread::parallelFor(0, x.size(), [&](int i) { x[i] = i; });",
#'              "}"), file.path(pkg, "src", "fill.cpp"))
#'
#' use_rcppspool(pkg)                   # shows what it would change
#' use_rcppspool(pkg, dry_run = FALSE)  # changes it
#' readLines(file.path(pkg, "DESCRIPTION"))
#' unlink(pkg, recursive = TRUE)
use_rcppspool <- function(path = ".", from = c("auto", "RcppThread", "RcppParallel"), dry_run = TRUE) {
  if (!is.character(path) || length(path) != 1L || is.na(path) || !nzchar(path)) {
    stop("path must be the folder of a package, not ", show_value(path), call. = FALSE)
  }
  if (!dir.exists(path)) stop("path ", path, " is not a folder", call. = FALSE)
  if (!file.exists(file.path(path, "DESCRIPTION"))) {
    stop(path, " is not the folder of a package: it has no DESCRIPTION file", call. = FALSE)
  }
  olds <- c("RcppThread", "RcppParallel")
  if (missing(from) || identical(from, c("auto", olds))) from <- "auto"
  if (!is.character(from) || !length(from) || anyNA(from) || !all(from %in% c("auto", olds)) ||
      ("auto" %in% from && length(from) > 1L)) {
    stop("from must be \"auto\", \"RcppThread\", \"RcppParallel\" or both of the last two, not ",
         show_value(from), call. = FALSE)
  }
  if (!isTRUE(dry_run) && !isFALSE(dry_run)) {
    stop("dry_run must be TRUE or FALSE, not ", show_value(dry_run), call. = FALSE)
  }
  dcf <- tryCatch(read.dcf(file.path(path, "DESCRIPTION")), error = function(e) {
    stop("cannot read ", file.path(path, "DESCRIPTION"), ": ", conditionMessage(e), call. = FALSE)
  })
  if (nrow(dcf) != 1L) stop(file.path(path, "DESCRIPTION"), " is not a package's DESCRIPTION", call. = FALSE)
  linking <- names(dep_entries(if ("LinkingTo" %in% colnames(dcf)) dcf[1, "LinkingTo"] else ""))
  if (identical(from, "auto")) {
    from <- intersect(olds, linking)
    if (!length(from) && !"RcppSpool" %in% linking) {
      stop("the LinkingTo field of ", file.path(path, "DESCRIPTION"),
           " names neither RcppThread nor RcppParallel (nor RcppSpool): give from = \"RcppThread\"",
           " or from = \"RcppParallel\" if the package uses one of them", call. = FALSE)
    }
  }
  from <- unique(from)

  m <- new.env(parent = emptyenv())
  m$dir <- path
  m$files <- list()
  m$order <- character()
  m$changes <- character()
  migrate_files(m, from)
  left <- migration_left(m, from)

  touched <- Filter(function(rel) file_changed(m$files[[rel]]), m$order)
  if (length(touched) && file.exists(file.path(path, "MD5"))) {
    m$files[["MD5"]] <- list(old = character(), new = NULL, eol = "\n")
    mig_note(m, "MD5", "removed (its checksums no longer match)")
    touched <- c(touched, "MD5")
  }
  touched <- touched[order(file_rank(touched))]
  changes <- m$changes[order(file_rank(sub(": .*$", "", m$changes)))]
  if (dry_run) {
    out <- character()
    for (rel in touched) out <- c(out, file_diff(m$files[[rel]], rel), "")
    if (length(changes)) {
      out <- c(out, paste0("use_rcppspool() would change (dry run, nothing written):"),
               paste0("  ", changes),
               paste0("Run use_rcppspool(", encodeString(path, quote = "\""), ", dry_run = FALSE) to write them."))
    } else {
      out <- "use_rcppspool(): nothing to change"
    }
    cat(out, sep = "\n")
  } else {
    for (rel in touched) {
      f <- m$files[[rel]]
      target <- file.path(path, rel)
      if (is.null(f$new)) unlink(target) else write_text(target, f$new, f$eol)
    }
    message(if (length(changes)) paste(c("use_rcppspool() changed:", paste0("  ", changes)), collapse = "\n")
            else "use_rcppspool(): nothing to change")
  }
  if (length(left)) {
    w <- simpleWarning(paste0(
      "use_rcppspool() left code that it cannot migrate", if (dry_run) " (dry run)", "; change it by hand:\n",
      paste0("  ", left, collapse = "\n")))
    w$left <- left
    class(w) <- c("RcppSpool_migration_left", class(w))
    warning(w)
    attr(changes, "left") <- left
  }
  invisible(changes)
}

# A bad argument in an error: strings quoted (up to 3, as c(...)), else as
# show_arg() shows it.
show_value <- function(x) {
  if (!is.character(x) || !length(x) || length(x) > 3L || anyNA(x)) return(show_arg(x))
  x <- encodeString(x, quote = "\"")
  if (length(x) == 1L) x else paste0("c(", paste(x, collapse = ", "), ")")
}

# ---------------------------------------------------------------------------
# The migration's state: `m` is an environment with `dir`, `files` (for each
# file read, by its path relative to dir: list(old, new, eol); old NULL for
# a file created, new NULL for a file removed), `order` (the files in the
# order first read) and `changes` (the lines returned).

mig_file <- function(m, rel) {
  if (is.null(m$files[[rel]])) {
    f <- file.path(m$dir, rel)
    txt <- if (file.exists(f) && !dir.exists(f)) read_text(f)
    m$files[[rel]] <- list(old = txt$lines, new = txt$lines, eol = if (is.null(txt)) "\n" else txt$eol)
    m$order <- c(m$order, rel)
  }
  m$files[[rel]]$new
}

mig_note <- function(m, rel, what) m$changes <- c(m$changes, paste0(rel, ": ", what))

# Applies fun() to the current lines of `rel`; notes `what` if they changed.
# Returns TRUE if they changed.
mig_edit <- function(m, rel, fun, what) {
  old <- mig_file(m, rel)
  if (is.null(old)) return(FALSE)
  new <- as.character(fun(old))  # character(0), not NULL, for a file left empty
  if (same_lines(old, new)) return(FALSE)
  m$files[[rel]]["new"] <- list(new)
  if (!is.null(what)) mig_note(m, rel, what)
  TRUE
}

same_lines <- function(a, b) length(a) == length(b) && all(a == b)

file_changed <- function(f) is.null(f$old) != is.null(f$new) || !same_lines(f$old, f$new)

# The order in which files are shown: DESCRIPTION, NAMESPACE, R/, src/, the
# rest, MD5.
file_rank <- function(rel) {
  top <- c("DESCRIPTION", "NAMESPACE")
  rank <- ifelse(rel %in% top, match(rel, top), ifelse(startsWith(rel, "R/"), 3L,
                 ifelse(startsWith(rel, "src/"), 4L, ifelse(rel == "MD5", 6L, 5L))))
  rank * 1e6 + seq_along(rel)
}

# The lines of a text file and its line ending; NULL for a binary file.
read_text <- function(f) {
  raw <- readBin(f, "raw", file.size(f))
  if (any(raw == as.raw(0L))) return(NULL)
  crlf <- length(raw) > 1L && any(raw[-length(raw)] == as.raw(13L) & raw[-1L] == as.raw(10L))
  list(lines = readLines(f, warn = FALSE), eol = if (crlf) "\r\n" else "\n")
}

write_text <- function(f, lines, eol = "\n") {
  con <- file(f, "wb")  # an existing file keeps its mode (configure)
  on.exit(close(con))
  writeLines(lines, con, sep = eol, useBytes = TRUE)
}

# The files of the package that the migration reads, relative to its folder.
package_files <- function(dir) {
  rel <- function(sub, pattern = NULL, recursive = TRUE) {
    d <- file.path(dir, sub)
    if (!dir.exists(d)) return(character())
    f <- list.files(d, pattern = pattern, recursive = recursive, ignore.case = TRUE)
    f <- f[!dir.exists(file.path(d, f))]
    if (length(f)) file.path(sub, f) else character()
  }
  code_ext <- "\\.(c|cc|cpp|cxx|c\\+\\+|h|hh|hpp|hxx|h\\+\\+|ipp|tpp|inl|inc)$"
  top <- c("configure", "configure.win", "configure.ucrt", "cleanup", "cleanup.win")
  list(
    code = c(rel("src", code_ext), rel(file.path("inst", "include"))),
    make = rel("src", "^(Makevars|Makefile)"),
    r = rel("R", "\\.[RrSsq]$", recursive = FALSE),
    scripts = top[file.exists(file.path(dir, top))],
    other = c(rel("tests", "\\.[Rr]$"), rel("vignettes", "\\.[Rr](md|nw|markdown)$"))
  )
}

# ---------------------------------------------------------------------------
# The steps

migrate_files <- function(m, from) {
  files <- package_files(m$dir)
  roxygen <- FALSE
  if (file.exists(file.path(m$dir, "NAMESPACE"))) {
    ns <- mig_file(m, "NAMESPACE")
    roxygen <- length(ns) > 0L && grepl("roxygen", ns[1], fixed = TRUE)
  }
  if ("RcppThread" %in% from) {
    for (rel in c(files$code, files$make, files$r, "NAMESPACE", files$scripts))
      mig_edit(m, rel, migrate_text, "RcppThread -> RcppSpool")
  }
  if ("RcppParallel" %in% from) {
    for (rel in files$code)
      mig_edit(m, rel, migrate_rcppparallel_source, "RcppParallel -> RcppSpool::RcppParallel")
    for (rel in files$make)
      mig_edit(m, rel, migrate_rcppparallel_makevars,
               "RcppParallel's and TBB's flags removed or replaced by RcppSpool::LdFlags()")
    migrate_rcppparallel_r(m, files$r)
    mig_edit(m, "NAMESPACE", function(l) migrate_rcppparallel_namespace(l, roxygen),
             "imports of RcppParallel removed")
  }

  # Build settings, whatever the package came from.
  if (dir.exists(file.path(m$dir, "src"))) {
    mk <- file.path("src", c("Makevars", "Makevars.win", "Makevars.ucrt",
                             "Makevars.in", "Makevars.win.in", "Makevars.ucrt.in"))
    mk <- mk[file.exists(file.path(m$dir, mk))]
    if (!length(mk)) {
      mk <- file.path("src", c("Makevars", "Makevars.win"))
      for (rel in mk) {
        mig_file(m, rel)
        m$files[[rel]]$new <- ensure_ldflags(ensure_cxx17(character()))
        mig_note(m, rel, "created, with CXX_STD = CXX17 and RcppSpool::LdFlags() in PKG_LIBS")
      }
    }
    for (rel in mk) {
      mig_edit(m, rel, ensure_cxx17, "CXX_STD = CXX17")
      mig_edit(m, rel, ensure_ldflags, "RcppSpool::LdFlags() in PKG_LIBS")
    }
  }

  migrate_description(m, from, files)
  migrate_namespace_import(m, files$r, roxygen)
}

# RcppThread: the header, the namespace, Rcpp::depends(), LdFlags(), the
# NAMESPACE directives and the macros.
migrate_text <- function(x) {
  x <- gsub("RcppThread", "RcppSpool", x, fixed = TRUE, useBytes = TRUE)
  gsub("RCPPTHREAD_", "RCPPSPOOL_", x, fixed = TRUE, useBytes = TRUE)
}

# `CXX_STD = CXX17` in a Makevars-like file: added if there is no CXX_STD,
# raised if it names an older standard, kept if it names C++17 or newer.
ensure_cxx17 <- function(lines) {
  at <- grep("^[[:space:]]*CXX_STD[[:space:]]*=", lines, useBytes = TRUE)
  if (!length(at)) return(c("CXX_STD = CXX17", lines))
  std <- sub("^[[:space:]]*CXX_STD[[:space:]]*=[[:space:]]*([^[:space:]#]*).*$", "\\1", lines[at], useBytes = TRUE)
  old <- std %in% c("CXX98", "CXX0X", "CXX11", "CXX1X", "CXX14", "CXX1Y", "")
  lines[at[old]] <- "CXX_STD = CXX17"
  lines
}

ldflags_call <- "`\"$(R_HOME)/bin/Rscript\" -e \"RcppSpool::LdFlags()\"`"

# RcppSpool::LdFlags() in PKG_LIBS, unless the file uses it already: added to
# the last assignment of PKG_LIBS (the one that counts), or as a new line
# after CXX_STD.
ensure_ldflags <- function(lines) {
  if (any(grepl("RcppSpool::LdFlags", lines, fixed = TRUE, useBytes = TRUE))) return(lines)
  group <- logical_lines(lines)
  starts <- which(!duplicated(group))
  libs <- starts[grepl("^[[:space:]]*PKG_LIBS[[:space:]]*[+:?]?=", lines[starts], useBytes = TRUE)]
  if (length(libs)) {
    last <- max(which(group == group[libs[length(libs)]]))
    lines[last] <- paste(sub("[[:space:]]+$", "", lines[last], useBytes = TRUE), ldflags_call)
    return(lines)
  }
  at <- grep("^[[:space:]]*CXX_STD[[:space:]]*=", lines, useBytes = TRUE)
  at <- if (length(at)) at[1] else 0L
  append(lines, paste("PKG_LIBS =", ldflags_call), after = at)
}

# The index of the logical line (lines joined by a trailing backslash) of each
# line of a makefile.
logical_lines <- function(lines) {
  cont <- grepl("\\\\$", lines, useBytes = TRUE)
  cumsum(c(TRUE, !cont[-length(cont)]))[seq_along(lines)]
}

# RcppParallel, in a C++ file: the include, the depends attribute, the
# namespace (qualified names, using-directives and aliases).
migrate_rcppparallel_source <- function(lines) {
  sub_all <- function(pattern, replacement, x, fixed = FALSE) {
    gsub(pattern, replacement, x, fixed = fixed, perl = !fixed, useBytes = TRUE)
  }
  lines <- sub_all("#([[:space:]]*)include[[:space:]]*[<\"]RcppParallel(/(Common|RVector|RMatrix))?\\.h[>\"]",
                   "#\\1include <RcppSpool/RcppParallel.h>", lines)
  at <- grep("Rcpp::depends[[:space:]]*\\(", lines, useBytes = TRUE)
  if (length(at)) {
    hit <- gregexpr("Rcpp::depends[[:space:]]*\\([^)]*\\)", lines[at], useBytes = TRUE)
    regmatches(lines[at], hit) <- lapply(regmatches(lines[at], hit), function(s) {
      sub_all("\\bRcppParallel\\b", "RcppSpool", s)
    })
  }
  lines <- sub_all("using(\\s+)namespace(\\s+)(::)?RcppParallel(\\s*);",
                   "using\\1namespace\\2RcppSpool::RcppParallel\\4;", lines)
  lines <- sub_all("(namespace\\s+\\w+\\s*=\\s*)(::)?RcppParallel(\\s*);", "\\1RcppSpool::RcppParallel\\3;", lines)
  sub_all("(?<!RcppSpool::)RcppParallel::", "RcppSpool::RcppParallel::", lines)
}

# RcppParallel, in a Makevars-like file: RcppParallelLibs() (and the older
# RcppParallel::LdFlags()) become RcppSpool::LdFlags(); CxxFlags(),
# -DRCPP_PARALLEL_USE_TBB=1, -ltbb, the variables RCPPPARALLEL_* and what is
# made of them go. A changed logical line is joined into one line; an
# assignment left empty goes.
migrate_rcppparallel_makevars <- function(lines) {
  if (!length(lines)) return(lines)
  group <- logical_lines(lines)
  out <- list()
  for (g in unique(group)) {
    old <- paste(lines[group == g], collapse = "\n")
    if (grepl("^[[:space:]]*RCPPPARALLEL_[A-Z_]+[[:space:]]*[+:?]?=", old, useBytes = TRUE)) next
    new <- old
    # $(shell ...) and `...` calling RcppParallel's R functions.
    shells <- "\\$\\(shell(?<body>(?:[^()]++|\\((?&body)\\))*)\\)|`[^`]*`"
    hit <- gregexpr(shells, new, perl = TRUE, useBytes = TRUE)
    regmatches(new, hit) <- lapply(regmatches(new, hit), function(s) vapply(s, function(one) {
      if (grepl("RcppParallel:::?(RcppParallelLibs|LdFlags)[[:space:]]*\\(", one, useBytes = TRUE)) return(ldflags_call)
      if (grepl("RcppParallel:::?CxxFlags[[:space:]]*\\(", one, useBytes = TRUE)) return("")
      one
    }, "", USE.NAMES = FALSE))
    new <- gsub("$(RcppParallel_LIBS)", ldflags_call, new, fixed = TRUE, useBytes = TRUE)
    new <- gsub("${RcppParallel_LIBS}", ldflags_call, new, fixed = TRUE, useBytes = TRUE)
    new <- gsub("-DRCPP_PARALLEL_USE_TBB(=1)?(?![A-Za-z0-9_=])", "", new, perl = TRUE, useBytes = TRUE)
    # Anything made of RCPPPARALLEL_* (rpaths, RcppParallel.so, -L), and TBB's libraries.
    new <- gsub("[^\\s\\\\]*\\$[({]RCPPPARALLEL_[A-Z_]+[)}][^\\s\\\\]*", "", new, perl = TRUE, useBytes = TRUE)
    new <- gsub("(?<![^\\s])-ltbb[A-Za-z0-9_]*", "", new, perl = TRUE, useBytes = TRUE)
    if (!identical(new, old)) {
      new <- gsub("[[:space:]]*\\\\\n[[:space:]]*", " ", new, useBytes = TRUE)
      new <- gsub("(?<=\\S)[ \t]{2,}", " ", new, perl = TRUE, useBytes = TRUE)
      new <- sub("[[:space:]]+$", "", new, useBytes = TRUE)
      if (grepl("^[[:space:]]*[A-Za-z0-9_.]+[[:space:]]*[+:?]?=$", new, useBytes = TRUE)) next
    }
    out[[length(out) + 1L]] <- if (nzchar(new)) strsplit(new, "\n", fixed = TRUE)[[1]] else ""
  }
  unlist(out)
}

# RcppParallel's R functions that RcppSpool also has, and those that only
# locate RcppParallel's or TBB's libraries (no counterpart, none needed).
rcppparallel_shared <- c("setThreadOptions", "defaultNumThreads", "LdFlags")
rcppparallel_linking <- c("RcppParallelLibs", "CxxFlags", "tbbLibraryPath", "RcppParallel.package.skeleton")

# RcppParallel, in the R files: RcppParallel::setThreadOptions() and
# defaultNumThreads() become RcppSpool's; roxygen's import tags name
# RcppSpool's functions or go. The first tag that only imported functions for
# linking becomes `@importFrom RcppSpool availableCores` when no tag imports
# from RcppSpool.
migrate_rcppparallel_r <- function(m, r_files) {
  dropped <- character()
  for (rel in r_files) {
    mig_edit(m, rel, function(lines) {
      lines <- gsub("RcppParallel:::?(setThreadOptions|defaultNumThreads)\\b", "RcppSpool::\\1", lines,
                    perl = TRUE, useBytes = TRUE)
      tag <- "^(\\s*#+'\\s*)@import(From)?\\s+RcppParallel\\b(.*)$"
      at <- grep(tag, lines, perl = TRUE, useBytes = TRUE)
      for (i in at) {
        lead <- sub(tag, "\\1", lines[i], perl = TRUE, useBytes = TRUE)
        from <- nzchar(sub(tag, "\\2", lines[i], perl = TRUE, useBytes = TRUE))
        names <- strsplit(trimws(sub(tag, "\\3", lines[i], perl = TRUE, useBytes = TRUE)), "\\s+")[[1]]
        names <- if (from) intersect(names, rcppparallel_shared) else c("defaultNumThreads", "setThreadOptions")
        if (length(names)) {
          lines[i] <- paste0(lead, "@importFrom RcppSpool ", paste(names, collapse = " "))
        } else {
          dropped <<- c(dropped, paste(rel, i))
          lines[i] <- paste0(lead, "@importFrom RcppSpool availableCores")
        }
      }
      lines
    }, "RcppParallel -> RcppSpool")
  }
  # The tags that imported only RcppParallel's linking functions were set to
  # import availableCores; one stays if nothing else imports from RcppSpool.
  if (length(dropped)) {
    spool_tag <- "^\\s*#+'\\s*@import(From)?\\s+RcppSpool\\b"
    rel_of <- sub(" [0-9]+$", "", dropped)
    line_of <- as.integer(sub("^.* ", "", dropped))
    others <- vapply(r_files, function(rel) {
      l <- mig_file(m, rel)
      at <- grep(spool_tag, l, perl = TRUE, useBytes = TRUE)
      length(setdiff(at, line_of[rel_of == rel])) > 0L
    }, TRUE)
    drop <- if (any(others)) seq_along(dropped) else seq_along(dropped)[-1L]
    for (rel in unique(rel_of[drop])) {
      l <- m$files[[rel]]$new
      m$files[[rel]]$new <- l[-line_of[drop][rel_of[drop] == rel]]
    }
  }
}

# RcppParallel, in NAMESPACE: importFrom(RcppParallel, ...) keeps the
# functions RcppSpool also has (from RcppSpool) and drops the others;
# import(RcppParallel) imports RcppSpool's two.
migrate_rcppparallel_namespace <- function(lines, roxygen) {
  pat <- "^\\s*import(From)?\\(\\s*[\"']?RcppParallel[\"']?\\s*(,(.*))?\\)\\s*$"
  out <- list()
  for (l in lines) {
    if (!grepl(pat, l, perl = TRUE, useBytes = TRUE)) { out[[length(out) + 1L]] <- l; next }
    from <- nzchar(sub(pat, "\\1", l, perl = TRUE, useBytes = TRUE))
    names <- gsub("[\"'[:space:]]", "", strsplit(sub(pat, "\\3", l, perl = TRUE, useBytes = TRUE), ",")[[1]])
    names <- if (from) intersect(names, rcppparallel_shared) else c("defaultNumThreads", "setThreadOptions")
    if (!length(names)) next
    out[[length(out) + 1L]] <- if (roxygen) paste0("importFrom(RcppSpool,", names, ")") else
      paste0("importFrom(RcppSpool, ", paste(names, collapse = ", "), ")")
  }
  unlist(out)
}

# DESCRIPTION: LinkingTo (and, for RcppThread, every dependency field), Imports
# and SystemRequirements.
migrate_description <- function(m, from, files) {
  rel <- "DESCRIPTION"
  edit_field <- function(field, fun, what) {
    mig_edit(m, rel, function(lines) desc_set(lines, field, fun(desc_get(lines, field))), paste0(field, ": ", what))
  }
  for (old in from) {
    fields <- if (old == "RcppThread") c("Depends", "LinkingTo", "Imports", "Suggests", "Enhances") else
      c("Depends", "LinkingTo")
    for (field in fields) edit_field(field, function(v) dep_rename(v, old, "RcppSpool"), paste(old, "-> RcppSpool"))
  }
  if ("RcppParallel" %in% from) {
    # RcppParallel stays in Imports if the R code or NAMESPACE still use it.
    code <- unlist(lapply(c(files$r, if (file.exists(file.path(m$dir, "NAMESPACE"))) "NAMESPACE"),
                          function(f) r_code_lines(mig_file(m, f))))
    if (!any(grepl("\\bRcppParallel\\b", code, perl = TRUE, useBytes = TRUE))) {
      edit_field("Imports", function(v) dep_remove(v, "RcppParallel"), "RcppParallel removed")
    }
  }
  deps <- function(field) names(dep_entries(desc_get(mig_file(m, rel), field)))
  if (!"RcppSpool" %in% c(deps("Imports"), deps("Depends"))) {
    edit_field("Imports", function(v) dep_add(v, "RcppSpool"), "RcppSpool added")
  }
  # The version of RcppSpool whose headers the package will be built with,
  # or later: its runtime must have what those headers ask for.
  version <- rcppspool_version()
  for (field in c("Depends", "LinkingTo", "Imports")) {
    edit_field(field, function(v) dep_require(v, "RcppSpool", version), paste0("RcppSpool (>= ", version, ")"))
  }
  edit_field("SystemRequirements", function(v) {
    if (is.null(v)) return(" C++17")
    if (grepl("C\\+\\+ ?(17|1z|2[0-9a-z])", v, useBytes = TRUE)) return(v)
    if (grepl("C\\+\\+ ?(98|0x|11|1x|14|1y)\\b", v, useBytes = TRUE)) {
      return(gsub("C\\+\\+ ?(98|0x|11|1x|14|1y)\\b", "C++17", v, useBytes = TRUE))
    }
    paste0(sub("[[:space:]]+$", "", v, useBytes = TRUE), ", C++17")
  }, "C++17")
}

# This RcppSpool's version, "0.11.0": what a migrated package requires.
rcppspool_version <- function() unname(getNamespaceVersion("RcppSpool"))

# The lines of R code (or NAMESPACE) that are not comments.
r_code_lines <- function(lines) lines[!grepl("^\\s*#", lines, useBytes = TRUE)]

# NAMESPACE: an import of RcppSpool, so that R CMD check does not note
# RcppSpool in Imports as unused.
migrate_namespace_import <- function(m, r_files, roxygen) {
  if (!file.exists(file.path(m$dir, "NAMESPACE"))) return()
  line <- if (roxygen) "importFrom(RcppSpool,availableCores)" else "importFrom(RcppSpool, availableCores)"
  added <- mig_edit(m, "NAMESPACE", function(lines) {
    if (any(grepl("^\\s*import(From)?\\(\\s*[\"']?RcppSpool[\"']?\\s*[,)]", lines, useBytes = TRUE))) return(lines)
    if (!roxygen) return(c(lines, line))
    # Where roxygen2 puts it: its lines are sorted in the C locale.
    later <- vapply(lines[-1L], function(l) nzchar(l) && sort(c(l, line), method = "radix")[1L] == line, TRUE)
    append(lines, line, after = if (any(later)) which(later)[1L] else length(lines))
  }, paste(line, "added"))
  if (added && roxygen) {
    tagged <- any(vapply(r_files, function(rel) {
      any(grepl("^\\s*#+'\\s*@import(From)?\\s+RcppSpool\\b", mig_file(m, rel), perl = TRUE, useBytes = TRUE))
    }, TRUE))
    if (!tagged) {
      mig_note(m, "NAMESPACE", paste0(
        "roxygen2 writes it: add `#' @importFrom RcppSpool availableCores` to a roxygen block in R/ ",
        "(the package's documentation, for instance), or the next roxygenise() drops ", line))
    }
  }
}

# What the migration could not do: names of the old packages left in the
# files it read, TBB's names, and uses in tests/ and vignettes/. "file:line:
# text" for each.
migration_left <- function(m, from) {
  files <- package_files(m$dir)
  left <- character()
  scan <- function(rel, pattern, skip = NULL) {
    lines <- if (rel %in% names(m$files)) m$files[[rel]]$new else {
      txt <- read_text(file.path(m$dir, rel))
      if (!is.null(txt)) txt$lines
    }
    if (!length(lines)) return()
    hit <- grepl(pattern, lines, perl = TRUE, useBytes = TRUE)
    if (!is.null(skip)) hit <- hit & !grepl(skip, lines, perl = TRUE, useBytes = TRUE)
    for (i in which(hit)) {
      text <- trimws(lines[i])
      if (nchar(text, type = "bytes") > 70L) text <- paste0(substr(text, 1L, 67L), "...")
      left <<- c(left, paste0(rel, ":", i, ": ", text))
    }
  }
  desc <- mig_file(m, "DESCRIPTION")
  dep_lines <- function(old) {
    fields <- c("Depends", "Imports", "LinkingTo")
    if (old == "RcppThread") fields <- c(fields, "Suggests", "Enhances")
    v <- unlist(lapply(fields, function(f) names(dep_entries(desc_get(desc, f)))))
    if (old %in% v) left <<- c(left, paste0("DESCRIPTION: ", old, " in ", paste(
      fields[vapply(fields, function(f) old %in% names(dep_entries(desc_get(desc, f))), TRUE)], collapse = ", ")))
  }
  comment_cpp <- "^\\s*(//|/\\*|\\*)"
  comment_sh <- "^\\s*#"
  # In tests/ and vignettes/ (not changed), code that uses the old package.
  uses <- function(old) paste0(old, ":::?|(library|require|requireNamespace)\\([\"']?", old, "\\b|depends\\(", old,
                               "\\b|", old, "\\.h\\b")
  if ("RcppThread" %in% from) {
    for (rel in c(files$code, files$make, files$r, "NAMESPACE", files$scripts))
      scan(rel, "RcppThread|RCPPTHREAD")
    for (rel in files$other) scan(rel, uses("RcppThread"))
    dep_lines("RcppThread")
  }
  if ("RcppParallel" %in% from) {
    for (rel in files$code) {
      scan(rel, paste0("\\btbb::|#\\s*include\\s*[<\"](tbb|RcppParallel)/|(?<!RcppSpool::)(?<!RcppSpool/)",
                       "\\bRcppParallel\\b|#\\s*define\\s+RCPP_PARALLEL_USE_TBB\\s+1"), comment_cpp)
    }
    for (rel in c(files$make, files$scripts)) scan(rel, "RcppParallel|RCPPPARALLEL|-ltbb|\\btbb\\b", comment_sh)
    for (rel in c(files$r, "NAMESPACE")) scan(rel, "\\bRcppParallel\\b", comment_sh)
    for (rel in files$other) scan(rel, uses("RcppParallel"))
    dep_lines("RcppParallel")
  }
  unique(left)
}
