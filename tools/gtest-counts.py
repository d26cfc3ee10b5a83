#!/usr/bin/env python3
"""Counts one build's GoogleTest reports (tools/run-tests.sh).

Usage: gtest-counts.py DIR FAILURES EXITED BINARY...

Reads DIR/gtest-BINARY.json for each BINARY, prints "passed failed" and
writes the failed tests' names, a line each, to FAILURES. A binary that
wrote no report (it crashed, or hung) counts as one failure; the last lines
of its output and its exit status (DIR/gtest-BINARY.log) go to stderr. EXITED is 1 if
some binary exited non-zero: a sanitizer report fails a binary whose tests
all passed, so that counts as one failure when none was seen. Skipped tests
are neither passed nor failed (their number goes to stderr).
"""
import json
import os
import sys

d, failures, exited, binaries = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4:]
passed = skipped = 0
failed = []
for name in binaries:
    path = os.path.join(d, "gtest-%s.json" % name)
    if not os.path.exists(path):
        print("   %s: no report (crashed or timed out)" % name, file=sys.stderr)
        # What it printed last, and its exit status (run-tests.sh's log).
        log = os.path.join(d, "gtest-%s.log" % name)
        if os.path.exists(log):
            tail = open(log, errors="replace").read().splitlines()[-25:]
            print("".join("   | %s\n" % l for l in tail), end="", file=sys.stderr)
        failed.append("%s (no report: crashed or timed out)" % name)
        continue
    for suite in json.load(open(path)).get("testsuites", []):
        for t in suite.get("testsuite", []):
            if t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN":
                skipped += 1
            elif t.get("failures"):
                failed.append(suite["name"] + "." + t["name"])
            else:
                passed += 1
if exited and not failed:
    failed.append("(a sanitizer report, or a binary that did not finish)")
with open(failures, "w") as out:
    out.write("".join(n + "\n" for n in failed))
if skipped:
    print("   %d skipped (not counted)" % skipped, file=sys.stderr)
print(passed, len(failed))
