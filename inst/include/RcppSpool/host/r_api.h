// R's C API as the R host includes it: R_NO_REMAP first, so that R's short
// macro names (length, error, ...) stay out of C++ code.
#pragma once

#ifndef R_NO_REMAP
#define R_NO_REMAP
#endif
#include <R_ext/Boolean.h>
#include <R_ext/Print.h>
#include <Rinternals.h>
