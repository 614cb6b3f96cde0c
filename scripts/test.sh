#!/usr/bin/env bash
# `npm test` after setup, in two stages:
# 1. the gate, about a minute and no engine: the unit tier, `tsc --noEmit` and ESLint over the tree. A failure here
#    stops the run: a broken pure function fails CI in a minute, not after the engine tiers' 25.
# 2. the engine tiers: every vitest project but `unit` (`engine`, `solo`: vitest.config.ts).
# Arguments go to both vitest runs; BERTH_TEST_GATE_ONLY=1 (npm run test:gate) stops after the gate. BERTH_TEST_REPORTS=DIR: each stage leaves a count there in vitest's JSON report
# shape (unit.json, tsc.json, eslint.json, engine.json), which .ci/run sums.
set -uo pipefail
cd "$(dirname "$0")/.."

reports="${BERTH_TEST_REPORTS:-}"
[ -z "$reports" ] || mkdir -p "$reports"
vitest_report() { [ -z "$reports" ] || echo "--reporter=default --reporter=json --outputFile.json=$reports/$1.json"; }
# A tool that is one check: counted as one test, passed or failed.
tool_report() { [ -z "$reports" ] || echo "{\"numPassedTests\":$(( $2 == 0 )),\"numFailedTests\":$(( $2 != 0 ))}" >"$reports/$1.json"; }

gate_start=$(date +%s)
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
# tsc and ESLint run beside the unit tier; their output is shown when they end, so it does not interleave.
node_modules/.bin/tsc --noEmit -p . >"$logs/tsc" 2>&1 &
tsc_pid=$!
node_modules/.bin/eslint --max-warnings 0 src test bench examples >"$logs/eslint" 2>&1 &
eslint_pid=$!
# shellcheck disable=SC2046 # the reporter options are words
node_modules/.bin/vitest run --project unit $(vitest_report unit) "$@"
unit=$?
wait "$tsc_pid"; tsc=$?
wait "$eslint_pid"; eslint=$?
tool_report tsc "$tsc"
tool_report eslint "$eslint"
echo
[ "$tsc" = 0 ] && echo "gate: tsc --noEmit clean" || { echo "gate: tsc --noEmit failed:"; cat "$logs/tsc"; }
[ "$eslint" = 0 ] && echo "gate: eslint clean" || { echo "gate: eslint failed:"; cat "$logs/eslint"; }
if [ "$unit" != 0 ] || [ "$tsc" != 0 ] || [ "$eslint" != 0 ]; then
  echo "gate: failed after $(( $(date +%s) - gate_start ))s (unit tier exit $unit, tsc exit $tsc, eslint exit $eslint); the engine tiers did not run"
  exit 1
fi
echo "gate: passed in $(( $(date +%s) - gate_start ))s"
[ "${BERTH_TEST_GATE_ONLY:-}" != 1 ] || exit 0

# shellcheck disable=SC2046
node_modules/.bin/vitest run --project '!unit' $(vitest_report engine) "$@"
