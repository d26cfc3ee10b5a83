# make demo: a real parallel computation with RcppSpool, timed against serial.
#
# A Gaussian kernel density estimate of 20,000 points on a grid of 2,000
# points (40 million kernel evaluations), computed by RcppSpool::parallelFor
# on 1 thread and on every available core, checked against R's own formula.
suppressPackageStartupMessages(library(RcppSpool))

cores <- availableCores()
threads <- max(1L, as.integer(cores))
set.seed(1)
x <- c(rnorm(1e4), rnorm(1e4, mean = 4, sd = 0.5))
grid <- seq(-4, 7, length.out = 2000)
bw <- bw.nrd0(x)

time_it <- function(expr, reps = 5) {
  t <- replicate(reps, system.time(force(expr()))[["elapsed"]])
  median(t)
}

cat(sprintf("RcppSpool %s demo: kernel density, %d points x %d grid points\n",
            utils::packageVersion("RcppSpool"), length(x), length(grid)))
cat(sprintf("available cores: %d (rule: %s)\n\n", cores, names(cores)))

serial <- time_it(function() RcppSpool:::.spool_kde(x, grid, bw, 1L))
parallel <- time_it(function() RcppSpool:::.spool_kde(x, grid, bw, threads))

dens <- RcppSpool:::.spool_kde(x, grid, bw, threads)
check <- vapply(grid[c(1, 500, 1000, 2000)], function(g) mean(dnorm((g - x) / bw)) / bw, 0)
stopifnot(isTRUE(all.equal(dens[c(1, 500, 1000, 2000)], check, tolerance = 1e-12)))

cat(sprintf("%-28s %10s %10s\n", "method", "seconds", "speedup"))
cat(sprintf("%-28s %10.3f %10.2f\n", "serial (1 thread)", serial, 1))
cat(sprintf("%-28s %10.3f %10.2f\n", sprintf("parallelFor (%d threads)", threads), parallel, serial / parallel))
cat("\nresult checked against R's dnorm(): OK\n")
