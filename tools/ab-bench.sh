#!/usr/bin/env bash
# A/B benchmark of two versions of the headers in one process (see
# cpp/bench/ab/ab_main.cpp): side A is BASE, side B the working tree's
# inst/include (or NEW). Prints each side's median and the median per-round
# ratio B / A, with its quartiles, for either link order.
#
#   tools/ab-bench.sh BASE [ROUNDS] [NEW]
#
# BASE and NEW: a git commit (its inst/include) or a directory that holds
# RcppSpool.h. Needs g++ only (no R, no OpenMP); with oneTBB installed, it
# then times fib(30) with a task per call, both sides against oneTBB's
# task_group in one process (issue 14's measure).
#
# AB_B_SEPARATE=1 builds side B as an R client is built: its runtime
# compiled once, in a file of its own, and called through its table
# (RCPPSPOOL_SEPARATE_RUNTIME); side A stays header-only.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${2:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

. "$root/tools/ab-headers.sh"
headers() {  # headers SOURCE DEST ABI
    ab_headers "$1" "$2"
    # An ABI number of its own per side: the two sides' inline functions and
    # statics then have different names and never merge.
    sed -i "s/^#define RCPPSPOOL_ABI_VERSION [0-9][0-9]*/#define RCPPSPOOL_ABI_VERSION $3/" "$2/RcppSpool/abi.h"
    grep -q "^#define RCPPSPOOL_ABI_VERSION $3\$" "$2/RcppSpool/abi.h" || { echo "ab-bench: no ABI version in $1" >&2; exit 1; }
}
headers "$1" "$work/a" 1001
headers "${3:-$root/inst/include}" "$work/b" 1002

flags="-std=c++17 -O2 -DNDEBUG -falign-functions=64 -falign-loops=64 -DRCPPSPOOL_STANDALONE -pthread"
bflags="" bimpl=""
if [ "${AB_B_SEPARATE:-0}" = 1 ]; then
    bflags="-DRCPPSPOOL_SEPARATE_RUNTIME" bimpl="$work/b_runtime.o"
    printf '#define RCPPSPOOL_IMPLEMENTATION\n#include <RcppSpool.h>\n' >"$work/b_runtime.cpp"
    g++ $flags $bflags -c -I"$work/b" "$work/b_runtime.cpp" -o "$bimpl"
fi
g++ $flags -c -DAB_SIDE=A -I"$work/a" "$root/cpp/bench/ab/ab_side.cpp" -o "$work/a.o" &
g++ $flags $bflags -c -DAB_SIDE=B -I"$work/b" "$root/cpp/bench/ab/ab_side.cpp" -o "$work/b.o"
wait
# Both link orders: where each side's code lands moves fine-grained task
# benchmarks by a few percent either way (an A/A pair read 0.97-1.07 on fib).
# With oneTBB installed, the driver also times fib(30) against its task_group.
tbb=""
if echo '#include <tbb/task_group.h>' | g++ -std=c++17 -x c++ -fsyntax-only - 2>/dev/null; then tbb="-DAB_TBB"; fi
g++ $flags $tbb "$root/cpp/bench/ab/ab_main.cpp" "$work/a.o" "$work/b.o" $bimpl -o "$work/ab" ${tbb:+-ltbb}
g++ $flags $tbb "$root/cpp/bench/ab/ab_main.cpp" "$work/b.o" $bimpl "$work/a.o" -o "$work/ba" ${tbb:+-ltbb}
echo "A: $1    B: ${3:-working tree}${bimpl:+ (its runtime through the table)}"
echo "-- linked A, B"
"$work/ab" "$rounds"
echo "-- linked B, A"
"$work/ba" "$rounds"
