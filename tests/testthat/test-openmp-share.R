# OpenMP regions inside a parallel loop's body get their share of the cores
# (engine/openmp_share.h), in a client compiled by R as a package's code is
# (Rcpp::sourceCpp, in a child R process: the loop runs in RcppSpool's
# runtime, reached through its table, with R's own libgomp loaded): from
# the first iteration on, every body call of a 2-thread loop sees OpenMP's
# default at max(1, n / 2) and its regions run on that many threads, for a
# native parallelFor and an RcppParallel Worker alike; R's main thread has
# n again afterwards. The same in C++ without R: cpp/tests/test_openmp_share.cpp.

skip_on_cran()
skip_on_os("windows")  # packages link OpenMP statically there: loops leave it alone
skip_if_not_installed("callr")
skip_if_not_installed("Rcpp")

openmp_share_code <- '
// [[Rcpp::plugins(openmp)]]
// [[Rcpp::depends(RcppSpool)]]
#include <Rcpp.h>
#include <RcppSpool.h>
#include <RcppSpool/RcppParallel.h>
#include <omp.h>

#include <vector>

// OpenMP default a body call saw, and the team its region ran on.
struct Seen {
  std::vector<int> seen, team;
  explicit Seen(int n) : seen(n), team(n) {}
  void at(std::size_t i) {
    seen[i] = omp_get_max_threads();
    int t = 0;
#pragma omp parallel
    {
#pragma omp single
      t = omp_get_num_threads();
    }
    team[i] = t;
  }
};

struct SeenWorker : RcppSpool::RcppParallel::Worker {
  Seen& s;
  explicit SeenWorker(Seen& x) : s(x) {}
  void operator()(std::size_t b, std::size_t e) override {
    for (std::size_t i = b; i < e; ++i) s.at(i);
  }
};

// [[Rcpp::export]]
Rcpp::List ompSeen(int n, bool worker) {
  const int before = omp_get_max_threads();
  Seen s(n);
  if (worker) {
    SeenWorker w(s);
    RcppSpool::RcppParallel::parallelFor(0, n, w, 1, 2);
  } else {
    RcppSpool::parallelFor(0, n, [&](std::ptrdiff_t i) { s.at(i); }, 2);
  }
  return Rcpp::List::create(Rcpp::_["before"] = before, Rcpp::_["seen"] = s.seen,
                            Rcpp::_["team"] = s.team, Rcpp::_["after"] = omp_get_max_threads());
}
'

test_that("a 2-thread loop's body calls all see their OpenMP share, from the first, through the table", {
  job <- start_r_job(function(code) {
    if (RcppSpool::getThreads() < 2L) return(list(skip = "fewer than 2 threads here"))
    env <- new.env()
    ok <- tryCatch({
      Rcpp::sourceCpp(code = code, env = env, cacheDir = tempfile("cache"), rebuild = TRUE)
      TRUE
    }, error = function(e) conditionMessage(e))
    if (!isTRUE(ok)) return(list(skip = paste("no OpenMP build here:", ok)))
    list(native = env$ompSeen(200L, FALSE), worker = env$ompSeen(200L, TRUE))
  }, list(openmp_share_code))
  res <- finish_r_job(job, what = "the OpenMP client")
  skip_if(!is.null(res$skip), res$skip)
  for (kind in c("native", "worker")) {
    r <- res[[kind]]
    n <- r$before
    if (n < 2L) next  # OpenMP runs on one thread here (OMP_NUM_THREADS=1): nothing to share
    share <- max(1L, n %/% 2L)
    expect_equal(unique(r$seen), share, info = kind)
    expect_equal(unique(r$team), share, info = kind)
    expect_equal(r$after, n, info = kind)
  }
})
