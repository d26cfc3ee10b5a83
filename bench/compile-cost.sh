#!/usr/bin/env bash
# What a client package pays to compile RcppSpool's headers, against RcppThread
# and plain Rcpp: each case is one translation unit (written here into a temp
# dir) compiled by g++ with R's flags for a package (-std=gnu++17 -O2 -g -fpic);
# it measures the compile's CPU seconds (user+sys) and the object's size.
#
#   bash bench/compile-cost.sh [ROUNDS] [--include DIR] [--csv FILE]
#
# ROUNDS (default 3): each round compiles every case once, the order turned by
# one case a round, so RcppSpool's and RcppThread's runs pair up in a round.
# --include DIR: RcppSpool's header tree (default inst/include), e.g. another
#   commit's: git archive C inst/include | tar -x -C /tmp/old, then /tmp/old/inst/include
# --csv FILE: writes every raw row (round,case,user_s,sys_s,cpu_s,obj_bytes).
# Every case has the same serial function; without RcppThread, its cases are skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=3 inc=$root/inst/include csv=
while [ $# -gt 0 ]; do
  case $1 in
    --include) inc=$(cd "$2" && pwd); shift 2 ;;
    --csv) csv=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) rounds=$1; shift ;;
  esac
done
[ -f "$inc/RcppSpool.h" ] || { echo "compile-cost: no RcppSpool.h in $inc" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One Rscript call: R's include dir, Rcpp's, RcppThread's ("-" if not installed).
mapfile -t dirs < <(Rscript -e 'p <- function(x) if (nzchar(x)) x else "-"
  cat(R.home("include"), p(system.file("include", package = "Rcpp")),
      p(system.file("include", package = "RcppThread")), sep = "\n")')
[ "${dirs[1]}" != - ] || { echo "compile-cost: Rcpp is not installed" >&2; exit 2; }
flags=(-std=gnu++17 -O2 -g -fpic "-I${dirs[0]}" "-I${dirs[1]}")
cases=(rcpp spool0 spool1 spool5 spoolT)
if [ "${dirs[2]}" != - ]; then
  cases=(rcpp thread1 thread5 threadT spool0 spool1 spool5 spoolT)
else
  echo "compile-cost: RcppThread is not installed: its cases are skipped"
fi

# source_of NS LOOPS: the translation unit; NS "" (plain Rcpp), RcppThread or RcppSpool.
source_of() {
  echo '#include <Rcpp.h>'
  [ -z "$1" ] || echo "#include <$1.h>"
  cat <<'EOF'

// [[Rcpp::export]]
Rcpp::NumericVector serial(Rcpp::NumericVector x) {
    Rcpp::NumericVector out(x.size());
    for (R_xlen_t i = 0; i < x.size(); ++i) out[i] = 2 * x[i] + 1;
    return out;
}
EOF
  local idx=int; [ "$1" = RcppSpool ] && idx=std::ptrdiff_t
  for k in $(seq 1 "$2"); do cat <<EOF

// [[Rcpp::export]]
Rcpp::NumericVector loop$k(Rcpp::NumericVector x) {
    const int n = static_cast<int>(x.size());
    Rcpp::NumericVector out(n);
    $1::parallelFor(0, n, [&]($idx i) { out[i] = std::pow(x[i], $k) + $k * x[i]; });
    return out;
}
EOF
  done
}
# tasks_of NS: the same with a pool of its own (push, pushReturn, wait) and
# async(), the task API that RcppThread and RcppSpool have in common.
tasks_of() {
  source_of "$1" 0
  cat <<EOF

// [[Rcpp::export]]
double tasks(int n) {
    std::atomic<long> s{0};
    $1::ThreadPool pool(2);
    for (int i = 0; i < n; ++i) pool.push([&s, i] { s += i; });
    auto f = pool.pushReturn([n] { return 2.0 * n; });
    pool.wait();
    auto g = $1::async([n] { return 3.0 * n; });
    return static_cast<double>(s.load()) + f.get() + g.get();
}
EOF
}
declare -A label=([rcpp]="Rcpp, serial only" [thread1]="RcppThread, 1 parallelFor"
  [thread5]="RcppThread, 5 parallelFor" [threadT]="RcppThread, tasks" [spool0]="RcppSpool, header only"
  [spool1]="RcppSpool, 1 parallelFor" [spool5]="RcppSpool, 5 parallelFor" [spoolT]="RcppSpool, tasks")
source_of "" 0 >"$work/rcpp.cpp"
source_of RcppSpool 0 >"$work/spool0.cpp"
tasks_of RcppSpool >"$work/spoolT.cpp"
[ "${dirs[2]}" = - ] || tasks_of RcppThread >"$work/threadT.cpp"
for n in 1 5; do
  source_of RcppSpool $n >"$work/spool$n.cpp"
  [ "${dirs[2]}" = - ] || source_of RcppThread $n >"$work/thread$n.cpp"
done
incs() { case $1 in thread*) echo "-I${dirs[2]}" ;; spool*) echo "-I$inc" ;; esac; }

echo "$(g++ --version | head -1); RcppSpool headers: $inc; $rounds round(s)"
rows=$work/rows.csv
echo "round,case,user_s,sys_s,cpu_s,obj_bytes" >"$rows"
nc=${#cases[@]}
for r in $(seq 1 "$rounds"); do
  for j in $(seq 0 $((nc - 1))); do
    c=${cases[$(((j + r - 1) % nc))]}
    # shellcheck disable=SC2046
    /usr/bin/time -f "%U %S" -o "$work/time" g++ "${flags[@]}" $(incs "$c") \
      -c "$work/$c.cpp" -o "$work/$c.o" || { echo "compile-cost: $c failed" >&2; exit 1; }
    read -r u s <"$work/time"
    echo "$r,$c,$u,$s,$(echo "$u $s" | awk '{printf "%.2f", $1 + $2}'),$(stat -c %s "$work/$c.o")" >>"$rows"
    printf '.' >&2
  done
done
echo >&2
[ -z "$csv" ] || cp "$rows" "$csv"

col() { awk -F, -v c="$1" -v k="$2" '$2 == c { print $k }' "$rows" | sort -g; }  # col CASE FIELD
median() { awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
printf '\n%-28s %10s %15s %10s\n' case "median CPU s" "min-max" "object MB"
declare -A cpu obj
for c in "${cases[@]}"; do
  cpu[$c]=$(col "$c" 5 | median); obj[$c]=$(col "$c" 6 | median)
  printf '%-28s %10.2f %15s %10.2f\n' "${label[$c]}" "${cpu[$c]}" \
    "$(col "$c" 5 | head -1)-$(col "$c" 5 | tail -1)" "$(awk -v b="${obj[$c]}" 'BEGIN { print b / 1e6 }')"
done
[ "${dirs[2]}" != - ] || exit 0
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo
for n in 1 5; do
  echo "RcppSpool / RcppThread, $n parallelFor: CPU $(ratio "${cpu[spool$n]}" "${cpu[thread$n]}")x," \
    "object $(ratio "${obj[spool$n]}" "${obj[thread$n]}")x"
done
echo "RcppSpool / RcppThread, tasks: CPU $(ratio "${cpu[spoolT]}" "${cpu[threadT]}")x," \
  "object $(ratio "${obj[spoolT]}" "${obj[threadT]}")x"
printf 'per round, 1 parallelFor, CPU RcppSpool / RcppThread:'
for r in $(seq 1 "$rounds"); do
  printf ' %s' "$(awk -F, -v r="$r" '$1 == r && $2 == "spool1" { s = $5 } $1 == r && $2 == "thread1" { t = $5 }
    END { printf "%.2f", s / t }' "$rows")"
done
echo
