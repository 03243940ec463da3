#!/usr/bin/env bash
# make test's time budget, for its shell steps (the Go side is test/realcluster/budget_test.go).
#
#   hack/budget.sh fits SECONDS WHAT   exit 0 when WHAT, needing SECONDS, ends before the deadline;
#                                      otherwise say so, record it in the skipped file, exit 1
#   hack/budget.sh report BUDGET       print what make test left out (nothing when all ran)
#   hack/budget.sh leave-to-cloud SECONDS TESTS
#                                      print 1 when the resource suite's cases for the deployed
#                                      cloud may be left out of the all-in-one's run: no budget, or
#                                      TESTS (go test -run) has TestWholeCloud, every image is
#                                      cached and SECONDS (the Go suites, the cloud's install, the
#                                      suite on it, its teardown) fit; print nothing otherwise
#
# KUPENSTACK_TEST_DEADLINE is the deadline in Unix seconds (unset: no budget, everything fits);
# KUPENSTACK_TEST_SKIPPED the file of left-out steps, one a line.
set -euo pipefail

deadline=${KUPENSTACK_TEST_DEADLINE:-}
skipped=${KUPENSTACK_TEST_SKIPPED:-}

case "${1:-}" in
fits)
	need=${2:?seconds}; what=${3:?what}
	[[ "$need" =~ ^[0-9]+$ ]] || { echo "budget.sh: seconds must be a number, not '$need'" >&2; exit 2; }
	[ -n "$deadline" ] || exit 0
	[[ "$deadline" =~ ^[0-9]+$ ]] || { echo "budget.sh: KUPENSTACK_TEST_DEADLINE=$deadline: want Unix seconds" >&2; exit 2; }
	left=$(( deadline - $(date +%s) ))
	[ "$need" -le "$left" ] && exit 0
	line="$what: needs about $(( (need + 59) / 60 )) min, $(( left / 60 )) min $(( left % 60 < 0 ? 0 : left % 60 )) s of make test's budget left"
	echo "TIME BUDGET: skipped $line"
	if [ -n "$skipped" ]; then echo "$line" >> "$skipped"; fi
	exit 1 ;;
report)
	budget=${2:?budget}
	if [ -n "$skipped" ] && [ -s "$skipped" ]; then
		echo "make test: left out to end within TEST_BUDGET=$budget minutes (make test TEST_BUDGET=0 runs everything):"
		sed 's/^/  - /' "$skipped"
	elif [ -n "$deadline" ]; then
		echo "make test: everything ran within TEST_BUDGET=$budget minutes"
	fi ;;
leave-to-cloud)
	# The cloud then runs those cases whatever the budget says later (TestWholeCloud): left out
	# here, they would otherwise not run at all. So only when the cloud surely starts.
	need=${2:?seconds}; tests=${3?tests}
	[ -n "$deadline" ] || { echo 1; exit 0; }
	why=
	if [[ "$tests" != *TestWholeCloud* ]]; then
		why="TestWholeCloud is not among the real cluster's tests"
	elif missing=$(hack/images.sh missing) && [ -n "$missing" ]; then
		why="$(echo "$missing" | wc -l) OpenStack images not cached"
	elif [ "$need" -gt $(( deadline - $(date +%s) )) ]; then
		why="the Go suites, the cloud's install, the suite on it and its teardown need about $(( (need + 59) / 60 )) min, $(( (deadline - $(date +%s)) / 60 )) min left"
	fi
	if [ -n "$why" ]; then
		echo "budget.sh: the resource suite runs whole on the all-in-one: $why" >&2
	else
		echo "budget.sh: the resource suite's cases for the deployed cloud are left to it (every image cached, it fits)" >&2
		echo 1
	fi ;;
*)
	sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
