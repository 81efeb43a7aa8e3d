#!/usr/bin/env bash
# The step of action.yml that runs jr2 (see there). Reads its inputs from JR2_* variables,
# writes the Ready-set to $GITHUB_STEP_SUMMARY and `exit-code` to $GITHUB_OUTPUT, and exits
# with jr2's exit code.
set -uo pipefail

if [ -n "${GITHUB_APP_ID:-}" ]; then
  unset GH_TOKEN                      # act as the App (GITHUB_APP_ID + GITHUB_APP_PRIVATE_KEY)
else
  unset GITHUB_APP_ID GITHUB_APP_PRIVATE_KEY
  export GH_TOKEN="${JR2_TOKEN:-}"    # jr2 reads GH_TOKEN before GITHUB_TOKEN
fi
unset JR2_TOKEN

source="${JR2_SOURCE:-github:${GITHUB_REPOSITORY:?set JR2_SOURCE or GITHUB_REPOSITORY}}"
# options as the shell would split them (quotes work), without evaluating them
split() { python3 -c 'import shlex, sys; sys.stdout.write("".join(a + "\n" for a in shlex.split(sys.argv[1])))' "$1"; }
mapfile -t options < <(split "${JR2_OPTIONS:-}")
mapfile -t work_options < <(split "${JR2_WORK_OPTIONS:-}")
to_summary() { [ "${JR2_SUMMARY:-true}" = "true" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; }

case "${JR2_COMMAND:-ready}" in
  ready)
    report="$(mktemp)"
    jr2 ready "$source" "${options[@]}" --format markdown > "$report"
    rc=$?
    cat "$report"
    to_summary && cat "$report" >> "$GITHUB_STEP_SUMMARY"
    ;;
  work)
    if [ -z "${JR2_RUN:-}" ]; then
      echo "error: the jr2 action needs \`run\` (the command to run per item) with command: work" >&2
      rc=2
    else
      jr2 work "$source" "${options[@]}" "${work_options[@]}" -- bash -c "$JR2_RUN"
      rc=$?
      if to_summary; then
        jr2 ready "$source" "${options[@]}" --format markdown >> "$GITHUB_STEP_SUMMARY"
      fi
    fi
    ;;
  *)
    echo "error: the jr2 action's command is \`ready\` or \`work\`, not \`$JR2_COMMAND\`" >&2
    rc=2
    ;;
esac
[ -n "${GITHUB_OUTPUT:-}" ] && echo "exit-code=$rc" >> "$GITHUB_OUTPUT"
exit "$rc"
