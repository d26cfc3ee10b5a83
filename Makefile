# RcppSpool: the two commands a new user needs are `make demo` and `make test`.
#   make demo   install what is needed, build the package, run the demo
#   make test   everything: R package check + tests, C++ suites (-O2, TSan, and
#               ASan+UBSan built with g++ -std=c++20 -Wpedantic -Werror), and the
#               C++ suites with clang++/libc++ and mingw-w64 (Windows .exe under
#               wine), each with warnings as errors
#   make test-toolchains  only that last part: the two extra toolchains
#   make bench  the engine benchmark (P1-P6), P6's loop taken apart against
#               OpenMP's static split, and the task-parallel suite, against
#               oneTBB, OpenMP, std::async and serial; and what a client file
#               costs to compile, against RcppThread and plain Rcpp; and the
#               instructions a spawn (callgrind, bench/spawn-cost.sh)
#   make bench-full  the full R benchmark() (the benchmarks article's data, man/figures/)
#   make bench-real  real CRAN packages (parallelDist, mvrsquared, lamW) as they
#               are and migrated by use_rcppspool(), timed on their own calls
#               (bench/real-packages.R; downloads and installs them, cached in
#               build/real-packages; ARGS="--rounds 2" passes options)
#   make soak   the engine's randomized stress for 10 minutes, also under the sanitizers
#   make site   the documentation site (pkgdown, offline) into site/, its links checked
SHELL := /bin/bash
R ?= R
RSCRIPT ?= Rscript
LIB := $(CURDIR)/.Rlib
BUILD := $(CURDIR)/build
export R_LIBS := $(LIB)$(if $(R_LIBS),:$(R_LIBS))
JOBS ?= 2

.PHONY: all deps install demo test test-r test-cpp test-toolchains check site bench bench-full bench-real soak cpp-release cpp-tsan cpp-asan clean

all: install

deps:
	@bash tools/install-deps.sh

# Installs into a project-local library (.Rlib) so nothing else is touched.
install: deps
	@mkdir -p $(LIB) $(BUILD)
	$(R) CMD INSTALL --preclean --no-test-load --library=$(LIB) . >$(BUILD)/install.log 2>&1 || { cat $(BUILD)/install.log; exit 1; }
	@echo "installed RcppSpool into $(LIB)"

demo: install
	$(RSCRIPT) bench/demo.R

test: deps
	@bash tools/run-tests.sh

# R CMD build + check --as-cran (examples, vignettes; tests run separately in test-r).
check: deps
	@bash tools/run-tests.sh check

# The pkgdown site (_pkgdown.yml) into site/, from the package installed in
# .Rlib, with no network and no warnings; then every internal link checked.
site: deps
	@bash tools/run-tests.sh site

test-r: install
	@bash tools/run-tests.sh r

test-cpp: deps
	@bash tools/run-tests.sh cpp

# clang++ with libc++, mingw-w64 run under wine (-Wpedantic -Werror).
# RCPPSPOOL_TOOLCHAINS=a,b replaces that list; gcc-cxx20 (g++ -std=c++20
# without sanitizers) is one more name it accepts.
test-toolchains: deps
	@bash tools/run-tests.sh toolchains

# The engine's randomized stress at length: 200 s in each of the three builds.
soak: deps
	@RCPPSPOOL_STRESS_SECONDS=200 bash tools/run-tests.sh cpp

# Explicit targets, not a pattern rule: make looks for no implicit rule for a
# .PHONY target, so `cpp-%:` built nothing and `make bench` on a fresh clone
# found no binaries (tools/run-tests.sh checks that each of these builds).
cpp-release cpp-tsan cpp-asan: deps
	cmake -S cpp -B $(BUILD)/$@ $(if $(filter cpp-tsan,$@),-DRCPPSPOOL_SANITIZE=thread,$(if $(filter cpp-asan,$@),-DRCPPSPOOL_SANITIZE=address,-DCMAKE_BUILD_TYPE=Release)) >/dev/null
	cmake --build $(BUILD)/$@ -j$(JOBS)

# The full benchmark() run behind the "Benchmarks" vignette and man/figures/.
bench-full: install
	$(RSCRIPT) bench/full.R

# Real packages against the RcppSpool of this checkout (installed into .Rlib first).
bench-real: install
	$(RSCRIPT) bench/real-packages.R --spool-lib $(LIB) $(ARGS)

bench: cpp-release
	@mkdir -p bench/results
	$(BUILD)/cpp-release/bench_engine 9 --csv bench/results/engine.csv
	$(BUILD)/cpp-release/bench_loop_anatomy 40
	$(BUILD)/cpp-release/bench_shapes --csv bench/results/shapes.csv
	$(BUILD)/cpp-release/bench_tasks --reps 3 --csv bench/results/tasks.csv
	bash bench/compile-cost.sh 3 --csv bench/results/compile-cost.csv
	@if command -v valgrind >/dev/null; then bash bench/spawn-cost.sh 22; fi

clean:
	rm -rf $(BUILD) $(LIB) site RcppSpool_*.tar.gz RcppSpool.Rcheck
