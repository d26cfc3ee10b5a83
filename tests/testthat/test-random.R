# RcppSpool::Rng seeded by RcppSpool::rngSeed(): a parallel simulation gives
# bitwise the same numbers for any thread count after set.seed(), others for
# another seed, and R's generator advances. See testpkg/src/random_test.cpp.

walks <- function(threads, paths = 1e5, steps = 10L) {
  spool_tests()$.spool_random_walks(paths, steps, as.integer(threads))
}

test_that("a parallel simulation after set.seed() is the same for 1, 2 and 4 threads", {
  set.seed(1)
  one <- walks(1)
  expect_length(one, 1e5)
  for (threads in c(2, 4)) {
    set.seed(1)
    expect_identical(walks(threads), one, label = paste(threads, "threads"))
  }
  # Normal steps: each walk is N(0, 10).
  expect_equal(mean(one), 0, tolerance = 0.05)
  expect_equal(var(one), 10, tolerance = 0.02)

  set.seed(2)
  two <- walks(2)
  expect_false(any(two == one))
  set.seed(1)
  expect_identical(walks(4), one)
})

test_that("rngSeed() advances R's generator as runif() would", {
  set.seed(1)
  first <- runif(1)
  set.seed(1)
  a <- walks(2, paths = 100)
  after <- runif(1)
  expect_false(after == first)
  # A second simulation in the same stream gets another seed.
  b <- walks(2, paths = 100)
  expect_false(identical(a, b))
  # .Random.seed set by hand (as when restoring a state) is read, not overwritten.
  set.seed(7)
  state <- .Random.seed
  c1 <- walks(1, paths = 100)
  assign(".Random.seed", state, envir = globalenv())
  expect_identical(walks(3, paths = 100), c1)
})

test_that("rngSeed() on a worker thread is an R error that says what to do", {
  expect_error(spool_tests()$.spool_random_seed_on_worker(),
               "rngSeed() was called from a worker thread", fixed = TRUE)
  # The session's generator still works, and so do the simulations.
  set.seed(1)
  expect_length(walks(2, paths = 10), 10)
})
