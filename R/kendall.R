#' Kendall's tau correlation matrix, fast and in parallel
#'
#' Computes Kendall's rank correlation (tau-b, which corrects for ties) for
#' every pair of columns of `x`, as `cor(x, method = "kendall", use = use)`
#' does, but with Knight's \eqn{O(n \log n)}{O(n log n)} algorithm instead of
#' \eqn{O(n^2)}{O(n^2)} comparisons per pair, and on several threads.
#'
#' @section Algorithm:
#' For each pair of variables, the observations are sorted by the first
#' variable (and by the second within ties of the first); then the number of
#' discordant pairs is the number of inversions of the second variable, which
#' a merge sort counts in \eqn{O(n \log n)}{O(n log n)} (Knight, 1966). Pairs
#' tied in the first variable (\eqn{n_1}{n1}), in the second (\eqn{n_2}{n2})
#' and in both (\eqn{n_3}{n3}) give tau-b
#' \deqn{\tau_b = \frac{n_0 - n_1 - n_2 + n_3 - 2 D}{\sqrt{(n_0 - n_1)(n_0 - n_2)}},
#'   \quad n_0 = n(n-1)/2,}{tau_b = (n0 - n1 - n2 + n3 - 2 D) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n - 1)/2,}
#' where \eqn{D}{D} is the number of discordant pairs: the same quantity as
#' [stats::cor()] computes. Each column is sorted once and paired with all
#' later columns.
#'
#' The work is spread over threads with `RcppSpool::parallelFor()` on the
#' nested loop of Nagler (2021): the outer loop over columns \eqn{i}{i} runs
#' in parallel, one iteration per column, and iteration \eqn{i}{i} computes
#' the pairs \eqn{(i, j)}{(i, j)}, \eqn{j > i}{j > i}, one after the other.
#' The iterations are unbalanced (the first ones have the most pairs);
#' `parallelFor()` splits the range adaptively so that all threads stay busy.
#' The computation can be interrupted (Ctrl-C).
#'
#' @section Missing and special values:
#' `use` has the meaning it has in [stats::cor()], and the result is the same:
#' * `"everything"` (the default): a pair involving a column with a missing
#'   value (`NA` or `NaN`) is `NA`; the diagonal is 1.
#' * `"all.obs"`: missing values are an error.
#' * `"complete.obs"`: rows with a missing value are dropped first; an error
#'   if fewer than 2 rows remain.
#' * `"na.or.complete"`: as `"complete.obs"`, but all `NA` (not an error) if
#'   fewer than 2 rows remain.
#' * `"pairwise.complete.obs"`: each pair uses the rows where both of its
#'   columns are present; `NA` if fewer than 2 such rows. The diagonal is the
#'   column with itself on its present rows (`NA` if that is constant).
#'
#' As with `cor()`, a pair with a constant column is `NA`, with the warning
#' "the standard deviation is zero". Infinite values are ordinary values
#' (`Inf` ties with `Inf`).
#'
#' @param x A numeric or logical matrix, or a data frame of such columns,
#'   with the observations in rows (at least 2) and the variables in columns.
#' @param use How to handle missing values: one of `"everything"`,
#'   `"all.obs"`, `"complete.obs"`, `"na.or.complete"`,
#'   `"pairwise.complete.obs"` (partial matching works), as in [stats::cor()].
#' @param nThreads The number of threads: a whole number from 0 to 1024;
#'   0 or 1 compute on the calling thread only. By default [getThreads()].
#' @return A symmetric `ncol(x)` by `ncol(x)` matrix of Kendall's tau-b, with
#'   the column names of `x` as row and column names.
#' @references
#' Knight, W. R. (1966). A computer method for calculating Kendall's tau with
#' ungrouped data. *Journal of the American Statistical Association*, 61(314),
#' 436-439. \doi{10.1080/01621459.1966.10480879}
#'
#' Nagler, T. (2021). R-friendly multi-threading in C++. *Journal of
#' Statistical Software, Code Snippets*, 97(1), 1-18.
#' \doi{10.18637/jss.v097.c01}
#' @seealso [stats::cor()], [benchmark()] (whose Kendall workload this is).
#' @examples
#' x <- cbind(a = rnorm(200), b = rnorm(200), c = round(rnorm(200)))
#' x[, "b"] <- x[, "b"] + x[, "a"]
#' kendall_matrix(x, nThreads = 2)
#' all.equal(kendall_matrix(x, nThreads = 2), cor(x, method = "kendall"))
#'
#' # missing values, as cor() handles them
#' x[3, "a"] <- NA
#' kendall_matrix(x, use = "pairwise.complete.obs", nThreads = 2)
#' @export
kendall_matrix <- function(x, use = "everything", nThreads = getThreads()) {
  use <- match.arg(use, c("everything", "all.obs", "complete.obs",
                          "na.or.complete", "pairwise.complete.obs"))
  nThreads <- check_thread_count(nThreads, "nThreads")
  x <- as_numeric_matrix(x)
  if (nrow(x) < 2L) {
    stop("kendall_matrix(): x needs at least 2 rows (observations), not ",
         nrow(x), call. = FALSE)
  }
  d <- ncol(x)
  names <- colnames(x)
  # cor() treats the diagonal differently with pairwise deletion, NA or not.
  pairwise <- use == "pairwise.complete.obs"
  if (anyNA(x)) {
    if (use == "all.obs") {
      stop("kendall_matrix(): x has missing values and use = \"all.obs\"",
           call. = FALSE)
    }
    if (use %in% c("complete.obs", "na.or.complete")) {
      x <- x[stats::complete.cases(x), , drop = FALSE]
      if (nrow(x) < 2L) {
        if (use == "complete.obs") {
          stop("kendall_matrix(): fewer than 2 complete rows (observations)",
               call. = FALSE)
        }
        return(matrix(NA_real_, d, d, dimnames = if (!is.null(names)) list(names, names)))
      }
    }
  }
  res <- .spool_kendall(x, pairwise, nThreads)
  if (res$constant) warning("the standard deviation is zero", call. = FALSE)
  tau <- res$tau
  if (!is.null(names)) dimnames(tau) <- list(names, names)
  tau
}

# x as a double matrix, or an error saying what is wrong with it.
as_numeric_matrix <- function(x) {
  if (is.data.frame(x)) {
    ok <- vapply(x, function(col) is.numeric(col) || is.logical(col), NA)
    if (!all(ok)) {
      stop("kendall_matrix(): every column of x must be numeric; not: ",
           paste(names(x)[!ok], collapse = ", "), call. = FALSE)
    }
    x <- as.matrix(x)
  }
  if (!is.matrix(x)) {
    stop("kendall_matrix(): x must be a matrix or a data frame, not ",
         if (is.atomic(x)) paste("a vector of type", typeof(x)) else class(x)[1L],
         call. = FALSE)
  }
  if (!(is.numeric(x) || is.logical(x))) {
    stop("kendall_matrix(): x must be numeric (or logical), not of type ",
         typeof(x), call. = FALSE)
  }
  storage.mode(x) <- "double"
  x
}
