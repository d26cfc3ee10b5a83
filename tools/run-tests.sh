#!/usr/bin/env bash
# Runs the test suites and prints one closing line that sums them all:
#   "N passed, N failed"
# Usage: run-tests.sh [all|check|r|site|cpp|toolchains]   (default all). Exit status 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
R=${R:-R}
RSCRIPT=${RSCRIPT:-Rscript}
LIB=$PWD/.Rlib
BUILD=$PWD/build
RESULTS=$BUILD/results
mkdir -p "$LIB" "$RESULTS"
rm -f "$RESULTS"/*.count "$RESULTS"/*.failures
export R_LIBS="$LIB${R_LIBS:+:$R_LIBS}"
# The randomized engine stress (and the memory test's random bursts) runs this
# long in each C++ build (3 builds: half a minute in all); `make soak` sets it
# much higher.
export RCPPSPOOL_STRESS_SECONDS=${RCPPSPOOL_STRESS_SECONDS:-10}
# CRAN packages that use RcppThread, migrated to RcppSpool and tested under
# both (tools/compat-packages.R, tests/testthat/test-compat-packages.R).
export RCPPSPOOL_COMPAT=${RCPPSPOOL_COMPAT:-true}

# record SUITE PASSED FAILED: also says how long the suite took (since the
# previous record, or the start).
SECONDS=0; last_record=0
record() {
  echo "$2 $3" >"$RESULTS/$1.count"
  # A suite that failed as a whole (a build, R CMD check) names itself.
  [ "$2" = 0 ] && [ "$3" != 0 ] && [ ! -s "$RESULTS/$1.failures" ] && echo "(the whole suite: see above)" >"$RESULTS/$1.failures"
  echo "== $1: $2 passed, $3 failed ($((SECONDS - last_record)) s)"
  last_record=$SECONDS
}

run_check() {
  echo "== R CMD build + R CMD check --as-cran --no-manual"
  local tmp; tmp=$(mktemp -d)
  (cd "$tmp" && "$R" CMD build --no-manual "$OLDPWD" >build.log 2>&1) || { cat "$tmp/build.log"; record check 0 1; return; }
  local tarball; tarball=$(ls "$tmp"/RcppSpool_*.tar.gz)
  # Tests run in run_r against the installed package (with counts); check runs
  # everything else: install, examples, vignettes, code and documentation checks.
  (cd "$tmp" && _R_CHECK_FORCE_SUGGESTS_=false "$R" CMD check --as-cran --no-manual --no-tests \
      "$tarball" >check.log 2>&1)
  local status; status=$(grep -E '^Status:' "$tmp/check.log" | tail -1)
  echo "   $status"
  # "Status: OK" or NOTEs only (the NOTE about a new submission is expected).
  if [[ "$status" =~ ERROR|WARNING ]] || [ -z "$status" ]; then
    cat "$tmp/check.log"
    record check 0 1
  else
    grep -E '^\* checking .*(NOTE)' -A6 "$tmp/check.log" | head -40
    record check 1 0
  fi
  rm -rf "$tmp"
}

run_r() {
  echo "== R tests (testthat), against the installed package"
  # What the tests compile is compiled without debug information (the same
  # code, a third less time): see tools/no-debug-info.mk.
  [ -n "${R_MAKEVARS_USER:-}" ] || export R_MAKEVARS_USER=$PWD/tools/no-debug-info.mk
  "$R" CMD INSTALL --preclean --no-test-load --library="$LIB" . >"$BUILD/install.log" 2>&1 || { cat "$BUILD/install.log"; record r 0 1; return; }
  "$RSCRIPT" tools/testthat-counts.R "$RESULTS/r.count" "$RESULTS/r.failures"
  if [ -f "$RESULTS/r.count" ]; then
    echo "   (install and R tests: $((SECONDS - last_record)) s)"; last_record=$SECONDS
  else
    record r 0 1
  fi
}

# The documentation site (tools/build-site.R: pkgdown, offline, no warning
# allowed, the C++ API reference checked against the headers) into site/,
# then every internal link of it (tools/check-site-links.R). The articles run
# against the package in .Rlib: installed first unless it is newer than the
# sources (run_r has just installed it when everything runs).
run_site() {
  echo "== documentation site (make site): build, then its internal links"
  local stamp=$LIB/RcppSpool/DESCRIPTION
  if [ ! -f "$stamp" ] || [ -n "$(find DESCRIPTION R src inst -type f ! -name '*.o' ! -name '*.so' ! -name '*.dll' -newer "$stamp" -print -quit)" ]; then
    "$R" CMD INSTALL --preclean --no-test-load --library="$LIB" . >"$BUILD/install.log" 2>&1 ||
      { cat "$BUILD/install.log"; record site 0 1; return; }
  fi
  local ok=0 bad=0
  if "$RSCRIPT" tools/build-site.R >"$BUILD/site.log" 2>&1; then
    ok=$((ok + 1)); tail -1 "$BUILD/site.log"
  else
    cat "$BUILD/site.log"; echo "site build failed (log: build/site.log)" >>"$RESULTS/site.failures"; bad=$((bad + 1))
  fi
  if [ $bad = 0 ] && "$RSCRIPT" tools/check-site-links.R site; then
    ok=$((ok + 1))
  else
    [ $bad = 0 ] && echo "site links: broken (see above)" >>"$RESULTS/site.failures"; bad=$((bad + 1))
  fi
  record site $ok $bad
}

# The wine prefix lives outside the source tree: it holds a symbolic link to
# "/" (drive z:), and R CMD build copies the tree following links.
WINE_PREFIX=${RCPPSPOOL_WINEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/rcppspool-wine}

# run_logged LOG COMMAND...: runs a test binary, its output shown as it comes
# and kept in LOG with its exit status on the last line, so that a binary
# that leaves no report is described where the run ends (gtest-counts.py).
run_logged() {
  local log=$1; shift
  "$@" 2>&1 | tee "$log"
  local status=${PIPESTATUS[0]}
  echo "(exit status $status)" >>"$log"
  return "$status"
}

run_cpp() {
  local b
  for b in release tsan asan; do
    case $b in
      release) echo "== C++ suites, release build (g++ -std=c++17 -O2)" ;;
      tsan) echo "== C++ suites, tsan build (g++ -std=c++17, ThreadSanitizer)" ;;
      asan) echo "== C++ suites, asan build (g++ -std=c++20 -Wpedantic -Werror, AddressSanitizer+UBSan)" ;;
    esac
    local dir=$BUILD/cpp-$b flags=(-DCMAKE_BUILD_TYPE=Release)
    [ $b = tsan ] && flags=(-DRCPPSPOOL_SANITIZE=thread)
    # The ASan build is also the suite's g++ -std=c++20 build, warning-free
    # under -Wpedantic -Werror (the release and TSan builds are C++17).
    [ $b = asan ] && flags=(-DRCPPSPOOL_SANITIZE=address -DCMAKE_CXX_STANDARD=20 -DCMAKE_CXX_EXTENSIONS=OFF
                            -DRCPPSPOOL_STRICT=ON)
    if ! { cmake -S cpp -B "$dir" "${flags[@]}" >/dev/null && cmake --build "$dir" -j2 >"$dir.log" 2>&1; }; then
      cat "$dir.log"; record "cpp-$b" 0 1; continue
    fi
    # TSan needs a fixed address layout on kernels with high mmap entropy.
    local pre=(); [ $b = tsan ] && command -v setarch >/dev/null && pre=(setarch "$(uname -m)" -R)
    rm -f "$dir"/gtest-*.json "$dir"/gtest-*.log
    local failed=0 names=()
    for exe in "$dir"/test_*; do
      [ -x "$exe" ] && [ -f "$exe" ] || continue
      local name; name=$(basename "$exe")
      names+=("$name")
      TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1" \
      ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1" \
        run_logged "$dir/gtest-$name.log" "${pre[@]}" "$exe" --gtest_brief=1 --gtest_output="json:$dir/gtest-$name.json" || failed=1
    done
    local counts; counts=$(python3 tools/gtest-counts.py "$dir" "$RESULTS/cpp-$b.failures" "$failed" "${names[@]}")
    record "cpp-$b" $counts
  done
}

# The C++ suites with two more toolchains, each warning-free under -Wall
# -Wextra -Wpedantic -Werror: clang++ with libc++ (macOS's standard library)
# and mingw-w64's g++ (POSIX threads, linked -static) whose .exe files run
# under wine. GoogleTest is compiled from Debian's sources with each. The
# stress runs briefly here. (g++ -std=c++20 is the ASan build of run_cpp; `gcc-cxx20`
# here builds it without sanitizers, for a look by hand.)
run_toolchains() {
  local gtest_src=/usr/src/googletest
  local name names=(clang-libcxx mingw-w64)
  [ -n "${RCPPSPOOL_TOOLCHAINS:-}" ] && read -r -a names <<<"${RCPPSPOOL_TOOLCHAINS//,/ }"
  for name in "${names[@]}"; do
    echo "== C++ suites, $name toolchain"
    local dir=$BUILD/cpp-$name cxx flags=() wine=() onwine=0
    case $name in
      clang-libcxx)
        cxx=clang++
        flags=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS=-stdlib=libc++
               -DRCPPSPOOL_GTEST_SOURCE=$gtest_src) ;;
      gcc-cxx20)
        cxx=g++
        flags=(-DCMAKE_CXX_STANDARD=20) ;;
      mingw-w64)
        cxx=x86_64-w64-mingw32-g++-posix
        flags=(-DCMAKE_SYSTEM_NAME=Windows -DCMAKE_C_COMPILER=x86_64-w64-mingw32-gcc-posix
               -DCMAKE_CXX_COMPILER=$cxx -DCMAKE_EXE_LINKER_FLAGS=-static
               -DRCPPSPOOL_GTEST_SOURCE=$gtest_src)
        # Threads start slowly under wine: fewer nesting rounds and pool cycles.
        wine=(env WINEPREFIX="$WINE_PREFIX" WINEDEBUG=-all WINEARCH=win64
              RCPPSPOOL_NESTING_ROUNDS=100 RCPPSPOOL_POOL_CYCLES=500 RCPPSPOOL_UNDER_WINE=1 wine)
        onwine=1 ;;
      *)
        echo "   unknown toolchain (RCPPSPOOL_TOOLCHAINS): clang-libcxx, gcc-cxx20, mingw-w64"
        record "cpp-$name" 0 1; continue ;;
    esac
    local missing=
    command -v "$cxx" >/dev/null || missing=$cxx
    [ $onwine = 1 ] && ! command -v wine >/dev/null && missing="$missing wine"
    [ -d "$gtest_src" ] || missing="$missing $gtest_src"
    if [ -n "$missing" ]; then
      echo "   not found: $missing (tools/install-deps.sh installs it, as root)"
      record "cpp-$name" 0 1; continue
    fi
    if ! { cmake -S cpp -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_EXTENSIONS=OFF -DRCPPSPOOL_STRICT=ON \
             -DRCPPSPOOL_BENCH=OFF "${flags[@]}" >"$dir.log" 2>&1 &&
           cmake --build "$dir" -j2 >>"$dir.log" 2>&1; }; then
      cat "$dir.log"; record "cpp-$name" 0 1; continue
    fi
    if [ $onwine = 1 ] && [ ! -f "$WINE_PREFIX/system.reg" ]; then
      mkdir -p "$(dirname "$WINE_PREFIX")"  # wine makes the prefix, not its parent
      "${wine[@]}" wineboot -i </dev/null >/dev/null 2>&1  # a new prefix, once (about 10 s)
    fi
    # One wine server for the whole suite, kept until the -k below: one
    # that ends by itself (3 s after its last client) while the next test
    # binary connects leaves that binary with "wine client error:0:
    # recvmsg: Connection reset by peer" and no report (CI lost
    # test_lent_workers so).
    # Its services (started by the first wine command, living as long as it
    # does) start here, apart from the test logs' pipes, which they would
    # otherwise hold open to the end.
    if [ $onwine = 1 ]; then
      env WINEPREFIX="$WINE_PREFIX" wineserver -p </dev/null >/dev/null 2>&1
      "${wine[@]}" wineboot </dev/null >/dev/null 2>&1
    fi
    rm -f "$dir"/gtest-*.json "$dir"/gtest-*.log
    local exe names=()
    for exe in "$dir"/test_*; do
      [ -x "$exe" ] && [ -f "$exe" ] || continue
      local base; base=$(basename "$exe")
      names+=("${base%.exe}")
      (cd "$dir" && RCPPSPOOL_STRESS_SECONDS=${RCPPSPOOL_TOOLCHAIN_STRESS_SECONDS:-5} \
        run_logged "gtest-${base%.exe}.log" timeout 600 "${wine[@]}" "./$base" --gtest_brief=1 \
          --gtest_output="json:gtest-${base%.exe}.json" </dev/null)
    done
    [ $onwine = 1 ] && env WINEPREFIX="$WINE_PREFIX" wineserver -k 2>/dev/null
    # (Exit statuses under wine say little: a binary without a report failed.)
    local counts; counts=$(python3 tools/gtest-counts.py "$dir" "$RESULTS/cpp-$name.failures" 0 "${names[@]}")
    record "cpp-$name" $counts
  done
}

# The Makefile's build targets each run their build (make -n: nothing is
# built). A pattern rule for .PHONY targets had run nothing: `make bench` on a
# fresh clone found no benchmark binaries, unnoticed because `make test`
# builds the same directory first.
run_make() {
  echo "== Makefile build targets (make -n)"
  local t out ok=0 bad=0
  for t in cpp-release cpp-tsan cpp-asan bench; do
    # (The dry run's output whole first: grep -q can exit before make is done
    # writing, and pipefail would then count make's SIGPIPE as a failure.)
    out=$(make -n "$t" 2>&1)
    if grep -q "cmake --build $BUILD/cpp-" <<<"$out"; then
      ok=$((ok + 1))
    else
      echo "make -n $t: no cmake --build" | tee -a "$RESULTS/make.failures"; bad=$((bad + 1))
    fi
  done
  record make $ok $bad
}

case $what in
  check) run_check ;;
  r) run_r ;;
  site) run_site ;;
  cpp) run_cpp ;;
  toolchains) run_toolchains ;;
  all) run_make; run_check; run_r; run_site; run_cpp; run_toolchains ;;
  *) echo "usage: $0 [all|check|r|site|cpp|toolchains]"; exit 2 ;;
esac

passed=0; failed=0
for f in "$RESULTS"/*.count; do
  read -r p q <"$f"; passed=$((passed + p)); failed=$((failed + q))
done
# What failed, last, where a log's tail shows it.
for f in "$RESULTS"/*.failures; do
  [ -s "$f" ] && sed "s/^/FAILED $(basename "$f" .failures): /" "$f"
done
echo "(all suites: $((SECONDS / 60)) min $((SECONDS % 60)) s)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
