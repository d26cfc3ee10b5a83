// The program's one file that compiles RcppSpool's runtime
// (RCPPSPOOL_SEPARATE_RUNTIME is defined for every file of this test).
#define RCPPSPOOL_IMPLEMENTATION
#include <RcppSpool.h>
