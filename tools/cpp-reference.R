# The C++ API reference (vignettes/cpp-api.Rmd), generated from the public
# headers' doc comments, and the check that no public name goes undocumented.
#
#   Rscript tools/cpp-reference.R          writes vignettes/cpp-api.Rmd
#   Rscript tools/cpp-reference.R --check  writes nothing; fails (status 1) if a
#                                          public name has no `//!` comment or
#                                          the article differs from the headers
#
# Public: every name declared in namespace RcppSpool (its inline namespaces
# included, and RcppSpool::RcppParallel) in inst/include/RcppSpool/*.h, and
# the public members of its public classes; not the internals under
# engine/, host/, runtime/, client/ and table/, nor namespaces named detail or
# *_detail, nor private and protected members. A name is documented when a
# `//!` comment stands right before one of its declarations (overloads share
# one); the members of an iterator class (the iterator protocol) are not
# listed, the class's comment says what kind of iterator it is. The headers
# are read line by line with a brace-depth scanner, not
# compiled: it knows namespaces, classes, access labels, functions (bodies
# and constructors' initializer lists), variables and aliases, which is all
# these headers declare.

args <- commandArgs(trailingOnly = TRUE)
check_only <- "--check" %in% args
root <- normalizePath(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])), ".."))
inc <- file.path(root, "inst", "include", "RcppSpool")
out_file <- file.path(root, "vignettes", "cpp-api.Rmd")

# The groups of the reference (as _pkgdown.yml's), and the headers of each.
groups <- list(
  "Loops and reductions" = c("parallel.h", "reduce.h"),
  "Tasks, futures and groups" = c("future.h", "task_future.h", "deferrable_future.h", "task_group.h"),
  "Pools and threads" = c("thread_pool.h", "thread.h", "per_thread.h", "on_main_thread.h"),
  "Output, progress and interrupts" = c("output.h", "progress.h", "interrupt.h"),
  "Cores and thread counts" = "cores.h",
  "Random numbers" = "random.h",
  "Timelines" = c("trace_zone.h", "timeline.h"),
  "Compatibility with RcppThread and RcppParallel" = c("rcppthread_names.h", "overrides.h", "rmatrix.h",
                                                       "RcppParallel.h"),
  "Versions" = c("version.h", "abi.h")
)
public_ns <- c("RcppSpool", "RCPPSPOOL_ABI", "with_rcpp", "plain", "RcppParallel")
# Namespaces that name nothing in a qualified name (inline ones).
inline_ns <- c("RCPPSPOOL_ABI", "with_rcpp", "plain")

headers <- sort(list.files(inc, pattern = "[.]h$"))
grouped <- unlist(groups, use.names = FALSE)
if (length(setdiff(headers, grouped)) || length(setdiff(grouped, headers))) {
  stop("tools/cpp-reference.R: headers without a group: ", paste(setdiff(headers, grouped), collapse = ", "),
       "; groups naming no header: ", paste(setdiff(grouped, headers), collapse = ", "), call. = FALSE)
}

squish <- function(x) trimws(gsub("[[:space:]]+", " ", x))

# Strips template<...> prefixes (balanced angle brackets) from a declaration.
strip_templates <- function(s) {
  repeat {
    if (!grepl("^template\\s*<", s)) return(s)
    start <- regexpr("<", s)
    depth <- 0L
    chars <- strsplit(s, "")[[1]]
    for (i in seq(start, length(chars))) {
      if (chars[i] == "<") depth <- depth + 1L
      if (chars[i] == ">") depth <- depth - 1L
      if (depth == 0L) break
    }
    s <- trimws(substring(s, i + 1L))
  }
}

# What a declaration (its text up to `{` or `;`) declares: list(kind, name), or NULL.
declared <- function(s) {
  s <- squish(s)
  if (!nzchar(s)) return(NULL)
  if (grepl("^(friend|static_assert|using namespace)\\b", s)) return(NULL)
  if (grepl("=\\s*(delete|default)$", s)) return(NULL)
  s <- strip_templates(s)
  s <- gsub("\\b(RCPPSPOOL_HIDDEN|inline|static|constexpr|virtual|explicit|extern)\\s+", "", s)
  s <- gsub("\\[\\[[^]]*\\]\\]\\s*", "", s)
  s <- gsub("\\b(decltype|alignas)\\s*\\([^()]*(\\([^()]*\\))?[^()]*\\)", "X", s)
  if (grepl("^(class|struct|union)\\b", s)) {
    return(list(kind = "class", name = sub("^(class|struct|union)\\s+(\\w+).*$", "\\2", s)))
  }
  if (grepl("^enum\\b", s)) return(list(kind = "enum", name = sub("^enum\\s+(class\\s+)?(\\w+).*$", "\\2", s)))
  if (grepl("^using\\s+\\w+\\s*=", s)) return(list(kind = "alias", name = sub("^using\\s+(\\w+).*$", "\\1", s)))
  if (grepl("^using\\b", s)) return(NULL)
  if (grepl("\\boperator\\b", s)) {
    return(list(kind = "function", name = squish(sub("^.*\\b(operator\\s*(\\(\\)|[^(]+))\\s*\\(.*$", "\\1", s))))
  }
  paren <- regexpr("\\(", s)
  eq <- regexpr("=", s)
  if (paren > 0 && (eq < 0 || paren < eq)) {
    return(list(kind = "function", name = sub("^.*?([~A-Za-z_][A-Za-z0-9_]*)\\s*$", "\\1", substring(s, 1, paren - 1))))
  }
  s <- sub("\\s*(=|\\{|\\[).*$", "", s)
  list(kind = "variable", name = sub("^.*?([A-Za-z_][A-Za-z0-9_]*)$", "\\1", s))
}

# The declarations of one header: a data frame of scope (qualified), name,
# kind, signature, doc; and its leading comment (before #pragma once).
scan_header <- function(file) {
  lines <- readLines(file.path(inc, file), warn = FALSE)
  intro <- character()
  for (l in lines) {
    if (!grepl("^//", l)) break
    intro <- c(intro, sub("^// ?", "", l))
  }
  decls <- list()
  # A scope: kind (namespace, class, block, init), name, recordable, access.
  stack <- list(list(kind = "file", name = "", recordable = FALSE, access = "public"))
  top <- function() stack[[length(stack)]]
  stmt <- ""
  doc <- character()
  in_block_comment <- FALSE
  in_macro <- FALSE
  qualify <- function() {
    names <- vapply(stack, function(s) if (s$kind %in% c("namespace", "class") && !s$name %in% inline_ns) s$name else "",
                    "")
    paste(names[nzchar(names)], collapse = "::")
  }
  record <- function(text, has_body) {
    d <- declared(text)
    if (is.null(d)) return(invisible())
    # An iterator class's members are the iterator protocol (operators and
    # member types): the class's own comment says which kind of iterator.
    if (grepl("iterator$", stack[[length(stack)]]$name)) return(invisible())
    if (d$kind == "class" && !has_body) return(invisible())  # a forward declaration
    sig <- squish(text)
    # A constructor's initializer list is not part of its signature.
    sig <- sub("\\)\\s*(noexcept\\s*)?:\\s*[A-Za-z_].*$", ")\\1", sig)
    sig <- sub("\\s+$", "", sig)
    decls[[length(decls) + 1L]] <<- data.frame(scope = qualify(), name = d$name, kind = d$kind, signature = sig,
                                               doc = paste(doc, collapse = "\n"), stringsAsFactors = FALSE)
  }
  for (raw in lines) {
    line <- raw
    if (in_macro) { in_macro <- grepl("\\\\$", line); next }
    if (in_block_comment) {
      if (!grepl("\\*/", line)) next
      line <- sub("^.*?\\*/", "", line)
      in_block_comment <- FALSE
    }
    t <- trimws(line)
    if (startsWith(t, "//!")) {
      doc <- c(doc, sub("^//! ?", "", t))
      next
    }
    if (startsWith(t, "//") || !nzchar(t)) {
      if (!nzchar(t) && !top()$recordable) doc <- character()
      next
    }
    if (startsWith(t, "#")) {
      in_macro <- grepl("\\\\$", t)
      if (!grepl("^#\\s*define\\s+RCPPSPOOL_VERSION", t)) next
      name <- sub("^#\\s*define\\s+(\\w+).*$", "\\1", t)
      decls[[length(decls) + 1L]] <- data.frame(scope = "", name = name, kind = "macro",
                                                signature = paste("#define", name), doc = paste(doc, collapse = "\n"),
                                                stringsAsFactors = FALSE)
      doc <- character()
      next
    }
    # Code: string and character literals emptied, a trailing comment dropped.
    line <- gsub("\"(\\\\.|[^\"\\\\])*\"", "\"\"", line)
    line <- gsub("'(\\\\.|[^'\\\\])+'", "''", line)
    line <- sub("//.*$", "", line)
    if (grepl("/\\*", line)) {
      if (!grepl("\\*/", line)) in_block_comment <- TRUE
      line <- gsub("/\\*.*?(\\*/|$)", "", line, perl = TRUE)
    }
    chars <- strsplit(line, "")[[1]]
    for (ch in chars) {
      sc <- top()
      if (ch == "{") {
        s <- squish(stmt)
        if (sc$kind %in% c("block", "init")) {
          stack[[length(stack) + 1L]] <- list(kind = "block", name = "", recordable = FALSE, access = "")
          next
        }
        if (grepl("^(inline\\s+)?namespace\\b", s)) {
          name <- sub("^(inline\\s+)?namespace\\s*(\\w*).*$", "\\2", s)
          stack[[length(stack) + 1L]] <- list(kind = "namespace", name = name, recordable = name %in% public_ns &&
                                                (sc$kind == "file" || sc$recordable), access = "public")
          stmt <- ""; doc <- character()
          next
        }
        d <- declared(s)
        # A brace initializer (of a variable, or of a member in a
        # constructor's initializer list): the declaration goes on after it.
        member_init <- grepl("\\)\\s*(noexcept\\s*)?:", s) && grepl("[A-Za-z0-9_>]$", s)
        if ((!is.null(d) && d$kind == "variable") || member_init) {
          stack[[length(stack) + 1L]] <- list(kind = "init", name = "", recordable = FALSE, access = "")
          stmt <- paste0(stmt, "{")
          next
        }
        if (sc$recordable && sc$access == "public") record(s, TRUE)
        if (!is.null(d) && d$kind == "class") {
          pub <- sc$recordable && sc$access == "public"
          stack[[length(stack) + 1L]] <- list(kind = "class", name = d$name, recordable = pub,
                                              access = if (grepl("^(template\\s*<.*>\\s*)?class\\b", s)) "private" else "public")
        } else {
          stack[[length(stack) + 1L]] <- list(kind = if (!is.null(d) && d$kind == "enum") "block" else "block",
                                              name = "", recordable = FALSE, access = "")
        }
        stmt <- ""; doc <- character()
      } else if (ch == "}") {
        closing <- top()
        stack[[length(stack)]] <- NULL
        if (closing$kind == "init") { stmt <- paste0(stmt, "}"); next }
        if (top()$kind %in% c("block", "init")) next
        stmt <- ""
        if (closing$kind != "class") doc <- character()
      } else if (ch == ";") {
        if (sc$kind %in% c("block", "init")) next
        s <- squish(stmt)
        if (nzchar(s) && sc$recordable && sc$access == "public") record(s, FALSE)
        stmt <- ""; doc <- character()
      } else if (ch == ":" && sc$kind == "class" && grepl("^\\s*(public|private|protected)\\s*$", stmt)) {
        stack[[length(stack)]]$access <- trimws(stmt)
        stmt <- ""; doc <- character()
      } else if (!(sc$kind %in% c("block"))) {
        stmt <- paste0(stmt, ch)
      }
    }
    if (!(top()$kind %in% c("block"))) stmt <- paste0(stmt, " ")
  }
  list(intro = intro, decls = if (length(decls)) do.call(rbind, decls) else NULL)
}

scanned <- stats::setNames(lapply(headers, scan_header), headers)

# Names without a doc comment (overloads share one).
undocumented <- character()
for (h in headers) {
  d <- scanned[[h]]$decls
  if (is.null(d)) next
  full <- ifelse(nzchar(d$scope), paste0(d$scope, "::", d$name), d$name)
  documented <- tapply(nzchar(d$doc), full, any)
  if (all(documented)) next
  undocumented <- c(undocumented, paste0(h, ": ", names(documented)[!documented]))
}

# The article.
code_block <- function(x) c("```cpp", x, "```")
# A long signature on several lines: the template head on a line of its own,
# then one parameter a line.
wrap_signature <- function(sig, name) {
  if (nchar(sig) <= 88L) return(sig)
  out <- character()
  rest <- sig
  if (grepl("^template\\s*<", rest)) {
    head <- strip_templates(rest)
    out <- trimws(substring(rest, 1L, nchar(rest) - nchar(head)))
    rest <- head
  }
  if (nchar(rest) <= 88L) return(c(out, rest))
  at <- regexpr(paste0("\\b", gsub("([][().*+?^$|{}\\\\])", "\\\\\\1", name), "\\s*\\("), rest)
  if (at < 0) return(c(out, rest))
  open <- at + attr(at, "match.length") - 1L
  chars <- strsplit(rest, "")[[1]]
  depth <- 0L
  cuts <- integer()
  close <- NA_integer_
  for (i in seq(open, length(chars))) {
    ch <- chars[i]
    if (ch %in% c("(", "<", "{", "[")) depth <- depth + 1L
    if (ch %in% c(")", ">", "}", "]")) depth <- depth - 1L
    if (ch == "," && depth == 1L) cuts <- c(cuts, i)
    if (depth == 0L) { close <- i; break }
  }
  if (is.na(close) || !length(cuts)) return(c(out, rest))
  bounds <- c(open, cuts, close)
  params <- vapply(seq_len(length(bounds) - 1L), function(k) trimws(substring(rest, bounds[k] + 1L, bounds[k + 1L] - 1L)), "")
  c(out, paste0(substring(rest, 1L, open)), paste0("    ", params, c(rep(",", length(params) - 1L), "")),
    paste0(")", substring(rest, close + 1L)))
}
# Comment text as Markdown: prose is escaped where Markdown would read it
# as something else (`<T>` as HTML, `a * b` as emphasis, `[a, b)` or
# `operator[](k)` as a link, a leading `#` as a heading), outside `code
# spans`; a run of lines
# indented by two spaces or more after a blank line is code.
escape_prose <- function(line) {
  parts <- strsplit(line, "`", fixed = TRUE)[[1]]
  if (!length(parts)) return(line)
  prose <- seq_along(parts) %% 2 == 1
  parts[prose] <- gsub("<", "&lt;", parts[prose], fixed = TRUE)
  parts[prose] <- gsub("*", "\\*", parts[prose], fixed = TRUE)
  # "[begin, end)" is text, not a link: escaped, it also spares pandoc a
  # search for the closing bracket of every one (10 s for this article).
  parts[prose] <- gsub("[", "\\[", parts[prose], fixed = TRUE)
  out <- paste(parts, collapse = "`")
  if (endsWith(line, "`")) out <- paste0(out, "`")
  sub("^(\\s*)#", "\\1\\\\#", out)
}
as_markdown <- function(x) {
  out <- character()
  code <- FALSE
  for (i in seq_along(x)) {
    indented <- grepl("^  ", x[i])
    prev_blank <- i == 1L || !nzchar(trimws(x[i - 1L]))
    if (indented && (code || prev_blank)) {
      code <- TRUE
      out <- c(out, paste0("  ", x[i]))
    } else {
      if (nzchar(trimws(x[i]))) code <- FALSE
      # A list right after a paragraph needs a blank line in pandoc's Markdown.
      if (grepl("^- ", x[i]) && !prev_blank && !grepl("^(- |  )", x[i - 1L])) out <- c(out, "")
      out <- c(out, escape_prose(x[i]))
    }
  }
  out
}
render_doc <- function(doc) {
  if (!nzchar(doc)) return(character())
  c(as_markdown(strsplit(doc, "\n", fixed = TRUE)[[1]]), "")
}
anchor <- function(x) gsub("[^a-z0-9]+", "-", tolower(x))
out <- c(
  "---",
  "title: \"C++ API reference\"",
  "output: rmarkdown::html_vignette",
  "vignette: >",
  "  %\\VignetteIndexEntry{C++ API reference}",
  "  %\\VignetteEngine{knitr::rmarkdown}",
  "  %\\VignetteEncoding{UTF-8}",
  "---",
  "",
  "<!-- Generated by tools/cpp-reference.R from the doc comments (//!) of",
  "     inst/include/RcppSpool/*.h: edit the headers, then run",
  "     `Rscript tools/cpp-reference.R`. Do not edit by hand. -->",
  "",
  paste("Every public name of namespace `RcppSpool`, as the headers declare and document it,",
        "grouped by topic. `#include <RcppSpool.h>` declares all of them",
        "(`<RcppSpool/RcppParallel.h>` adds `RcppSpool::RcppParallel`).",
        "Names under `RcppSpool/engine/`, `host/`, `runtime/`, `client/` and `table/` are the library's",
        "internals and are not listed. `vignette(\"RcppSpool\")` shows how the pieces fit together."),
  ""
)
for (g in names(groups)) {
  out <- c(out, paste("##", g), "")
  for (h in groups[[g]]) {
    s <- scanned[[h]]
    out <- c(out, paste0("### `<RcppSpool/", h, ">`"), "")
    if (length(s$intro)) out <- c(out, as_markdown(s$intro), "")
    d <- s$decls
    if (is.null(d)) next
    d$full <- ifelse(nzchar(d$scope), paste0(d$scope, "::", d$name), d$name)
    for (full in unique(d$full)) {
      rows <- d[d$full == full, ]
      out <- c(out, paste0("#### `", full, "`"), "")
      # Each declaration with its own comment; overloads without one follow
      # the last that has one.
      for (i in seq_len(nrow(rows))) {
        out <- c(out, code_block(wrap_signature(rows$signature[i], rows$name[i])), "", render_doc(rows$doc[i]))
      }
    }
  }
}
out <- c(out, "")

status <- 0L
if (length(undocumented)) {
  message("cpp-reference: public names without a doc comment (//!):\n  ", paste(undocumented, collapse = "\n  "))
  status <- 1L
}
if (check_only) {
  current <- if (file.exists(out_file)) readLines(out_file, warn = FALSE) else character()
  if (!identical(current, out)) {
    message("cpp-reference: vignettes/cpp-api.Rmd differs from the headers: run Rscript tools/cpp-reference.R")
    status <- 1L
  }
  n <- sum(vapply(scanned, function(s) if (is.null(s$decls)) 0L else length(unique(paste(s$decls$scope, s$decls$name))), 0L))
  cat(sprintf("cpp-reference: %d public names in %d headers, %d undocumented, article %s\n", n, length(headers),
              length(undocumented), if (identical(current, out)) "up to date" else "out of date"))
} else {
  writeLines(out, out_file)
  cat("cpp-reference: wrote", out_file, "\n")
}
quit(status = status)
