test_that("exceptions from tasks, loops, Threads and async reach R with their messages", {
  for (where in c("task", "loop", "thread", "async")) {
    msg <- paste("failure in a", where)
    expect_error(spool_tests()$.spool_throw_from(where, msg), msg, fixed = TRUE)
  }
})

test_that("after an error the global pool keeps working", {
  expect_error(spool_tests()$.spool_throw_from("loop", "once"), "once")
  expect_equal(spool_tests()$.spool_sum_loop(1e5, 2L), sum(sqrt(0:(1e5 - 1))))
})

test_that("results do not depend on the number of threads", {
  ref <- spool_tests()$.spool_sum_loop(1e6, 1L)
  for (n in c(0L, 2L, 3L, 8L)) expect_identical(spool_tests()$.spool_sum_loop(1e6, n), ref)
})

test_that("repeated calls neither fail nor leak", {
  expect_equal(spool_tests()$.spool_many_loops(1000L, 100L), 1000 * sum(0:99))
})
