# Progress steps for the quickstart scripts (sourced). Set STEP_PREFIX (the name on each line)
# and STEP_RETRY (what to run again after a failure) before calling step.

# step TITLE LOG FUNCTION: one progress line; on failure, the step, its log and the log's end.
STEPS_DONE=0
step() {
  local title=$1 log=$2 fn=$3 start=$SECONDS
  STEPS_DONE=$((STEPS_DONE + 1))
  printf '[%s %s] %2d. %s ...' "$STEP_PREFIX" "$(date +%T)" "$STEPS_DONE" "$title"
  # A subshell outside any condition, so that set -e stops the step at its first failing command.
  set +e
  (set -e; "$fn") >>"$log" 2>&1 </dev/null
  local rc=$?
  set -e
  if ((rc == 0)); then
    printf ' ok (%ds)\n' $((SECONDS - start))
    return
  fi
  printf ' FAILED (%ds)\n' $((SECONDS - start))
  {
    echo "$STEP_PREFIX: step '$title' failed; its log is $log, which ends with:"
    tail -n 15 "$log" | sed 's/^/    /'
    echo "$STEP_RETRY"
  } >&2
  exit 1
}

# wait_until SECONDS CMD...: a bound for a broken start, not a performance target.
wait_until() {
  local secs=$1 i; shift
  for ((i = 0; i < secs * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  "$@" # once more, with its output, for the log
}
