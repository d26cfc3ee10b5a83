# Checks of arguments given to this package's R functions, and how a bad one
# is shown in the error.

# A short description of a bad argument `x`, for an error message: its value
# if it is a single atomic value, else its class and length.
show_arg <- function(x) {
  if (is.atomic(x) && length(x) == 1L) format(x) else
    paste0("an object of class ", class(x)[1L], " and length ", length(x))
}

# A thread count given to a function of this package: a whole number from 0 to
# 1024, returned as an integer; anything else is an error naming `arg`.
check_thread_count <- function(n, arg) {
  ok <- is.numeric(n) && length(n) == 1L && !is.na(n) && n >= 0 && n <= 1024 &&
    n == round(n)
  if (!ok) stop(arg, " must be a whole number from 0 to 1024, not ", show_arg(n), call. = FALSE)
  as.integer(n)
}
