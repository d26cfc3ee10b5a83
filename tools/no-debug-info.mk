# Make include file for the compilations that `make test` runs through R (the
# test package, throwaway client packages, sourceCpp, the CRAN packages of the
# compatibility checks): R's flags without -g. GCC and clang generate the same
# code with and without -g; debug information only makes these compilations
# about a third slower (spoolTests: 75 s with it, 48 s without, 2 cores).
# tools/run-tests.sh points R_MAKEVARS_USER here; the user's own Makevars is
# read first, as R would have read it.
-include $(HOME)/.R/Makevars
CFLAGS := $(filter-out -g,$(CFLAGS))
CXXFLAGS := $(filter-out -g,$(CXXFLAGS))
CXX11FLAGS := $(filter-out -g,$(CXX11FLAGS))
CXX14FLAGS := $(filter-out -g,$(CXX14FLAGS))
CXX17FLAGS := $(filter-out -g,$(CXX17FLAGS))
CXX20FLAGS := $(filter-out -g,$(CXX20FLAGS))
