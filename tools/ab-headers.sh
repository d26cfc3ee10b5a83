# Sourced by tools/ab-bench.sh and tools/ab-tasks.sh (needs $root and $work).
# ab_headers SOURCE DEST: copies a version of the headers to DEST. SOURCE is
# a directory that holds RcppSpool.h, or a git commit (its inst/include).
ab_headers() {
    if [ -f "$1/RcppSpool.h" ]; then
        cp -r "$1" "$2"
    else
        mkdir -p "$work/git"
        git -C "$root" archive "$1" inst/include | tar -x -C "$work/git"
        mv "$work/git/inst/include" "$2"
        rm -rf "$work/git"
    fi
}
