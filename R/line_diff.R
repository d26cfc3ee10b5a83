# The line diff that use_rcppspool()'s dry run prints (R/migrate.R).

# A unified diff of one file's lines (with `context` lines around changes).
file_diff <- function(f, rel, context = 2L) {
  a <- if (is.null(f$old)) character() else f$old
  b <- if (is.null(f$new)) character() else f$new
  head <- c(if (is.null(f$old)) "--- /dev/null" else paste0("--- a/", rel),
            if (is.null(f$new)) "+++ /dev/null" else paste0("+++ b/", rel))
  if (is.null(f$new)) return(c(head, "(the file is removed)"))
  ops <- line_diff(a, b)
  if (all(ops == "=")) return(character())
  n <- length(ops)
  ia <- cumsum(ops != "+")
  ib <- cumsum(ops != "-")
  near <- rep(FALSE, n)
  for (i in which(ops != "=")) near[max(1L, i - context):min(n, i + context)] <- TRUE
  runs <- rle(near)
  ends <- cumsum(runs$lengths)
  out <- head
  for (r in which(runs$values)) {
    idx <- (ends[r] - runs$lengths[r] + 1L):ends[r]
    na <- sum(ops[idx] != "+")
    nb <- sum(ops[idx] != "-")
    sa <- ia[idx[1]] - (ops[idx[1]] != "+")
    sb <- ib[idx[1]] - (ops[idx[1]] != "-")
    out <- c(out, sprintf("@@ -%d,%d +%d,%d @@", sa + (na > 0), na, sb + (nb > 0), nb))
    text <- ifelse(ops[idx] == "+", b[pmax(ib[idx], 1L)], a[pmax(ia[idx], 1L)])
    out <- c(out, paste0(c("=" = " ", "-" = "-", "+" = "+")[ops[idx]], text))
  }
  out
}

# The shortest edit script from `a` to `b` (Myers' algorithm): "=" for a line
# kept, "-" for a line of `a` removed, "+" for a line of `b` added.
line_diff <- function(a, b) {
  u <- unique(c(a, b))
  a <- match(a, u)
  b <- match(b, u)
  n <- length(a)
  m <- length(b)
  k <- min(n, m)
  pre <- if (k) match(FALSE, a[seq_len(k)] == b[seq_len(k)], nomatch = k + 1L) - 1L else 0L
  k <- k - pre
  suf <- if (k) match(FALSE, rev(a)[seq_len(k)] == rev(b)[seq_len(k)], nomatch = k + 1L) - 1L else 0L
  mid <- myers(a[seq_len(n - pre - suf) + pre], b[seq_len(m - pre - suf) + pre])
  c(rep("=", pre), mid, rep("=", suf))
}

myers <- function(a, b) {
  n <- length(a)
  m <- length(b)
  if (!n) return(rep("+", m))
  if (!m) return(rep("-", n))
  # How far the lines of a from x and of b from y are the same.
  snake <- function(x, y) {
    len <- 0L
    lim <- min(n - x, m - y)
    while (len < lim) {
      k <- min(lim - len, 64L)
      j <- match(FALSE, a[x + len + seq_len(k)] == b[y + len + seq_len(k)])
      if (is.na(j)) len <- len + k else return(len + j - 1L)
    }
    len
  }
  dmax <- n + m
  off <- dmax + 2L
  v <- integer(2L * dmax + 3L)
  trace <- list()
  for (d in 0:dmax) {
    for (k in seq(-d, d, by = 2L)) {
      x <- if (k == -d || (k != d && v[off + k - 1L] < v[off + k + 1L])) v[off + k + 1L] else v[off + k - 1L] + 1L
      y <- x - k
      x <- x + snake(x, y)
      v[off + k] <- x
      if (x >= n && x - k >= m) {
        trace[[d + 1L]] <- v[off + (-d - 1L):(d + 1L)]
        return(myers_path(trace, d, n, m))
      }
    }
    trace[[d + 1L]] <- v[off + (-d - 1L):(d + 1L)]
  }
}

# Walks the furthest points of each step back from (n, m).
myers_path <- function(trace, dend, n, m) {
  ops <- character(n + m)
  at <- n + m
  x <- n
  y <- m
  put <- function(op, times = 1L) {
    if (times > 0L) ops[(at - times + 1L):at] <<- op
    at <<- at - times
  }
  for (d in rev(seq_len(dend))) {
    vp <- trace[[d]]  # step d - 1, for k from -d to d
    get <- function(k) vp[k + d + 1L]
    k <- x - y
    down <- k == -d || (k != d && get(k - 1L) < get(k + 1L))
    pk <- if (down) k + 1L else k - 1L
    px <- get(pk)
    py <- px - pk
    sx <- if (down) px else px + 1L   # where this step's snake began
    put("=", x - sx)
    put(if (down) "+" else "-")
    x <- px
    y <- py
  }
  put("=", x)
  ops[seq_len(n + m - at) + at]
}
