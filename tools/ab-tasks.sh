#!/usr/bin/env bash
# A/B run of the task suite (cpp/bench/tasks): the working tree's bench_tasks
# built twice, against BASE's headers (side A) and the working tree's
# inst/include (side B), run in turns. Prints, per program and method, the
# median of the per-round ratios B / A of the medians (time) and, for
# reference, each side's median time relative to oneTBB in the same runs.
#
#   tools/ab-tasks.sh BASE [ROUNDS] [GRAIN] [METHODS]
#
# BASE: a git commit (its inst/include) or a directory that holds
# RcppSpool.h. ROUNDS: pairs of runs (default 3). GRAIN: fine (default),
# coarse or both. METHODS: bench_tasks's --methods (default
# spool-async,spool-optional,spool-group,tbb). AB_ONLY=fib,nqueens: those
# programs only. Needs g++, OpenMP and oneTBB (libtbb-dev). Each side is its
# own process: unlike tools/ab-bench.sh, the compiler makes its inlining
# choices for the whole suite, as in a real build, so a cost that shows
# only where a call is not inlined (a 64-byte task record passed by value,
# copied in loads wider than the stores that built it: fine-grained async
# 28% slower) shows here.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${2:-3}
grain=${3:-fine}
methods=${4:-spool-async,spool-optional,spool-group,tbb}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

. "$root/tools/ab-headers.sh"
ab_headers "$1" "$work/a"
ab_headers "$root/inst/include" "$work/b"

# As cpp/CMakeLists.txt builds bench_tasks (Release: -O2), with functions and
# loops aligned to 64 bytes: the two binaries differ in size, which moves the
# programs' own code, and where a hot loop falls mattered more than anything
# compared here (strassen's sequential run, the same instructions in both
# binaries: 1.8 s in one, 2.3-3.1 s in the other; 1.77-1.80 s in both once
# aligned).
flags="-std=c++17 -O2 -DRCPPSPOOL_STANDALONE -fopenmp -pthread -falign-functions=64 -falign-loops=64"
for side in a b; do
    g++ $flags -I"$work/$side" "$root/cpp/bench/tasks/bench_tasks.cpp" -o "$work/bench_$side" -ltbb &
done
wait
[ -x "$work/bench_a" ] && [ -x "$work/bench_b" ] || { echo "ab-tasks: a build failed" >&2; exit 1; }

for r in $(seq "$rounds"); do
    for side in a b; do
        "$work/bench_$side" --grain "$grain" --malloc equalised --methods "$methods" --reps 3 \
            ${AB_ONLY:+--only "$AB_ONLY"} --csv "$work/$side.$r.csv" >/dev/null
    done
    echo "round $r of $rounds done" >&2
done

echo "A: $1    B: working tree    grain: $grain, $rounds rounds, medians of 3 runs a round"
python3 - "$work" "$rounds" <<'EOF'
import csv, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def load(side, r):
    with open(f"{work}/{side}.{r}.csv") as f:
        return {(row["program"], row["grain"], row["method"]): float(row["median_s"])
                for row in csv.DictReader(f) if row["status"] == "ok"}
a = [load("a", r) for r in range(1, rounds + 1)]
b = [load("b", r) for r in range(1, rounds + 1)]
keys = [k for k in a[0] if all(k in x for x in a + b) and k[2] not in ("sequential", "tbb::task_group")]
print(f"{'program':<10} {'grain':<6} {'method':<34} {'B / A':>7} {'(min-max)':>13} {'A/tbb':>7} {'B/tbb':>7}")
for k in keys:
    ratios = [y[k] / x[k] for x, y in zip(a, b)]
    tk = (k[0], k[1], "tbb::task_group")
    ta = statistics.median(x[k] / x[tk] for x in a) if all(tk in x for x in a) else float("nan")
    tb = statistics.median(y[k] / y[tk] for y in b) if all(tk in y for y in b) else float("nan")
    print(f"{k[0]:<10} {k[1]:<6} {k[2]:<34} {statistics.median(ratios):7.3f} "
          f"{min(ratios):6.3f}-{max(ratios):.3f} {ta:7.3f} {tb:7.3f}")
EOF
