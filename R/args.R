# Checks of arguments given to this package's R functions, and how a bad one
# is shown in the error.

# A short description of a bad argument `x`, for an error message: its value
# if it is a single atomic value, else its class and length.
show_arg <- function(x) {
  if (is.atomic(x) && length(x) == 1L) format(x) else
    paste0("an object of class ", class(x)[1L], " and length ", length(x))
}

# Whether `x` is one whole number from `lo` to `hi` (not NA).
is_whole_number <- function(x, lo = -Inf, hi = Inf) {
  is.numeric(x) && length(x) == 1L && !is.na(x) && x >= lo && x <= hi && x == round(x)
}

# A thread count given to a function of this package: a whole number from 0 to
# 1024, returned as an integer; anything else is an error naming `arg`.
check_thread_count <- function(n, arg) {
  if (!is_whole_number(n, 0, 1024)) {
    stop(arg, " must be a whole number from 0 to 1024, not ", show_arg(n), call. = FALSE)
  }
  as.integer(n)
}
