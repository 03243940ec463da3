#!/usr/bin/env bash
# hack/ci-digest.sh LOG: after a failed run, the few lines of LOG that say what failed, for the end of
# the output (CI keeps only the output's tail, which a failed real-cluster test fills with its
# clean-up). Go's test output does not mark a t.Errorf apart from a t.Logf, so the messages are
# picked by their words; the whole log is the authority.
set -euo pipefail
log=$1
cut_long() { cut -c1-400; }
# A line may start with a time of day ("hh:mm:ss "), as in logs a reader timestamped, then with
# "[cloud] ", make test's mark on the real cluster's lines.
ts='^([0-9]{2}:[0-9]{2}:[0-9]{2} )?(\[cloud\] )?'
echo
echo "==== what failed (from $log) ===="
grep -E -e "${ts}\\s*--- FAIL: " -e "${ts}FAIL\\s" -e "${ts}panic: " -e "${ts}make(\\[[0-9]+\\])?: \\*\\*\\*" "$log" | cut_long | tail -n 20 || true
echo "---- the test messages that read like failures (the last 25) ----"
# A test message: "<file>_test.go:<line>: <text>" (Go indents it by its depth); the clean-up's own
# "[real-cluster ...]" lines are left out.
grep -E "${ts}\\s*[A-Za-z0-9_]+_test\\.go:[0-9]+: " "$log" | grep -v -F '[real-cluster ' |
	grep -i -E 'fail|error|timed out|deadline|not (ready|active|found|reported|healthy)|did not|does not|no [a-z]+ (from|in)|unreachable|differs|unexpected|want |panic|refused|still ' |
	cut_long | tail -n 25 || true
echo "==== the whole log: $log ===="
