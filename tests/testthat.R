library(testthat)
library(RcppSpool)

test_check("RcppSpool")
