#!/usr/bin/env bash
# Instructions a spawn, counted by callgrind on one CPU (issue 38's method):
# fib(N) with one task per call, minus plain recursive fib(N), divided by the
# spawns (fib(N+1) - 1: 28,656 for fib(22)). Only the measured function is
# counted (cpp/bench/spawn_cost.cpp), on a pool of one worker, so every
# spawn is one its owner takes back.
#
#   bash bench/spawn-cost.sh [N] [--separate | --r] [--bin BUILD/spawn_cost] [--annotate MODE]
#
# --separate counts the build with the runtime compiled once, reached through
# its table (spawn_cost_separate: RCPPSPOOL_SEPARATE_RUNTIME), as an R
# client reaches RcppSpool's; without it, the headers alone. --r counts an R
# client: the same program compiled by Rcpp::sourceCpp() against the
# RcppSpool installed in R_LIBS (make install: .Rlib), run by R under
# callgrind (oneTBB is not measured there).
# --annotate MODE also prints where a spawn's instructions go in that mode
# (async, deferred, group, tbb): each function's own, a spawn's share, then
# callgrind_annotate's inclusive profile.
# Needs valgrind; builds build/cpp-release/spawn_cost if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

n=22
bin=build/cpp-release/spawn_cost
annotate=""
while (($#)); do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --separate) bin=build/cpp-release/spawn_cost_separate; shift ;;
    --r) bin=R; shift ;;
    --annotate) annotate="$2"; shift 2 ;;
    *) n="$1"; shift ;;
  esac
done

command -v valgrind >/dev/null || { echo "spawn-cost.sh: valgrind is not installed" >&2; exit 1; }
if [[ $bin != R && ! -x "$bin" ]]; then
  cmake -S cpp -B build/cpp-release -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/cpp-release --target "$(basename "$bin")" >/dev/null
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [[ $bin == R ]]; then
  # The R client: compiled once (outside callgrind), then run from its cache.
  printf '%s\n' '// [[Rcpp::depends(RcppSpool)]]' '#include <Rcpp.h>' '#define SPAWN_COST_NO_MAIN' \
    "#include \"$PWD/cpp/bench/spawn_cost.cpp\"" '// [[Rcpp::export]]' 'double spawnCost(int mode, int n)' '{' \
    '    RcppSpool::ThreadPool::globalInstance().setNumThreads(1);' \
    '    return static_cast<double>(RcppSpool::async([=] { return spawn_cost_measured(mode, n); }).get());' \
    '}' >"$out/client.cpp"
  printf '%s\n' 'a <- commandArgs(TRUE)' \
    'Rcpp::sourceCpp(file.path(a[1], "client.cpp"), cacheDir = file.path(a[1], "cache"))' \
    'modes <- c(plain = 0L, async = 1L, deferred = 2L, group = 3L)' \
    'cat(a[2], "fib =", spawnCost(modes[[a[2]]], as.integer(a[3])), "\n")' >"$out/run.R"
  Rscript "$out/run.R" "$out" plain 2 >"$out/compile.log" 2>&1 || { cat "$out/compile.log" >&2; exit 1; }
fi

# Instructions of spawn_cost_measured() (inclusive) in one run of MODE.
count() {
  local mode=$1
  local vg=(valgrind --tool=callgrind --toggle-collect=spawn_cost_measured --callgrind-out-file="$out/$mode.out")
  if [[ $bin == R ]]; then
    taskset -c 0 R -d "${vg[*]}" --vanilla --slave -f "$out/run.R" --args "$out" "$mode" "$n" >"$out/$mode.log" 2>&1 ||
      { cat "$out/$mode.log" >&2; exit 1; }
  else
    taskset -c 0 "${vg[@]}" "$bin" "$mode" "$n" >"$out/$mode.log" 2>&1 || { cat "$out/$mode.log" >&2; exit 1; }
  fi
  # "summary:"/"totals:" lines hold the collected events (Ir first).
  awk '/^(summary|totals):/ {print $2; exit}' "$out/$mode.out"
}

# Spawns: calls with n >= 2, fib(n + 1) - 1.
spawns=$(awk -v n="$n" 'BEGIN { a = 0; b = 1; for (i = 0; i < n + 1; i++) { t = a + b; a = b; b = t } print a - 1 }')

plain=$(count plain)
tbbPlain=""
if [[ $bin != R ]] && "$bin" tbb-plain 2 >/dev/null 2>&1; then tbbPlain=$(count tbb-plain); fi

printf "%s, fib(%d): %d spawns; plain recursion %s instructions\n" "$(basename "$bin")" "$n" "$spawns" "$plain"
printf "%-10s %14s %12s\n" what instructions "a spawn"
for mode in async deferred group tbb; do
  base=$plain
  if [[ $mode == tbb ]]; then
    [[ -n $tbbPlain ]] || { [[ $bin == R ]] || echo "tbb        (not built: no oneTBB)"; continue; }
    base=$tbbPlain
  fi
  total=$(count "$mode")
  awk -v m="$mode" -v t="$total" -v b="$base" -v s="$spawns" \
    'BEGIN { printf "%-10s %14d %12.1f\n", m, t, (t - b) / s }'
done

if [[ -n $annotate ]]; then
  echo
  echo "$annotate: instructions a spawn by function, its own (exclusive):"
  callgrind_annotate --threshold=99 "$out/$annotate.out" 2>/dev/null | grep -E '^ *[0-9,]+ \(' |
    awk -v s="$spawns" '{ n = $1; gsub(",", "", n); $2 = ""; if (n / s >= 0.5) printf "%8.1f  %s\n", n / s, substr($0, index($0, $3), 150) }'
  echo
  callgrind_annotate --inclusive=yes --threshold=99 "$out/$annotate.out" | head -60
fi
