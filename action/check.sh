#!/usr/bin/env bash
# The step of action.yml: `lmconform check` with the action's inputs (INPUT_* variables; the key in
# LMCONFORM_API_KEY, never on a command line). A run appends its headline to $GITHUB_STEP_SUMMARY itself; a run that
# could not start (exit status 2 or 3) appends the line that says why. The exit status is lmconform's.
set -u -o pipefail
set -f  # check globs are lmconform's, not the shell's

args=(check)
[ -n "${INPUT_ENDPOINT:-}" ] && args+=("$INPUT_ENDPOINT")
[ -n "${INPUT_MODEL:-}" ] && args+=(--model "$INPUT_MODEL")
[ -n "${INPUT_UPSTREAM:-}" ] && args+=(--upstream "$INPUT_UPSTREAM")
[ -n "${INPUT_EXPECT:-}" ] && args+=(--expect "$INPUT_EXPECT")
[ -n "${INPUT_AGENTS:-}" ] && args+=(--agents "$INPUT_AGENTS")
for glob in ${INPUT_CHECKS:-}; do args+=(--checks "$glob"); done
[ -n "${INPUT_REPEAT:-}" ] && args+=(--repeat "$INPUT_REPEAT")
[ -n "${INPUT_READ_TIMEOUT:-}" ] && args+=(--read-timeout "$INPUT_READ_TIMEOUT")
[ -n "${INPUT_AGENTS:-}" ] && args+=(--agents "$INPUT_AGENTS")
case "${INPUT_STRICT:-false}" in
  true) args+=(--strict) ;;
  false | "") ;;
  *) echo "lmconform action: strict is true or false, not '$INPUT_STRICT'" >&2; exit 2 ;;
esac
args+=(--out "${INPUT_OUT:-lmconform-report}")

errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
status=0
"${LMCONFORM:-lmconform}" "${args[@]}" 2> "$errors" || status=$?
cat "$errors" >&2
if [ "$status" -ge 2 ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  { echo "### lmconform: the check could not run (exit status $status)"; echo; sed 's/^/    /' "$errors"; echo; } \
    >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"
