#!/usr/bin/env bash
# Berth's Python verifier shim (nemo_gym.data.tasks.harbor.python_verifier): clear stale reward files, find a Python of at least
# 3.8, and run the runner, which imports the grading module, calls its `verify` and writes the reward file.
# No Python, or one older than 3.8, is exit 127 with the reason on stderr and no reward (the sample scores 0
# with harbor:missing_reward). The exit code never affects the score.
#
# Laid out under /tests by src/verify/shim.ts (see shimLayout there). Every path can be moved through the
# environment so the shim also runs outside a sandbox (tests); in a sandbox none of these is set but BERTH_WORKSPACE
# by a separate verifier, whose own working directory is not the task's:
#   BERTH_TESTS_DIR   where the task's tests/ and this script live     (default /tests)
#   BERTH_SHIM_DIR    the runner, helpers, task_data.json, response.json (default $BERTH_TESTS_DIR/.ng)
#   BERTH_REWARD_DIR  where reward.txt / reward.json go                (default /logs/verifier)
#   BERTH_WORKSPACE   the task's working directory                     (default: the current directory,
#                     since test.sh is started from the working directory)
#   BERTH_VERIFIER    the grading module (default: $BERTH_SHIM_DIR/verifier.py when the dataset's
#                     verifier.py was uploaded there, else $BERTH_TESTS_DIR/verifier.py)
set -u

tests_dir="${BERTH_TESTS_DIR:-/tests}"
shim_dir="${BERTH_SHIM_DIR:-$tests_dir/.ng}"
reward_dir="${BERTH_REWARD_DIR:-/logs/verifier}"
workspace="${BERTH_WORKSPACE:-$PWD}"

rm -f -- "$reward_dir/reward.json" "$reward_dir/reward.txt"

if command -v python3 >/dev/null 2>&1; then
  py=python3
elif command -v python >/dev/null 2>&1; then
  py=python
else
  echo "berth verifier shim: neither python3 nor python is on PATH; a Python verifier needs Python 3.8 or newer in the image" >&2
  exit 127
fi

# Written so that Python 2 can answer too, and report its own version.
version="$("$py" -c 'import sys; sys.stdout.write("%d.%d.%d" % tuple(sys.version_info[:3]))' 2>/dev/null)"
major="${version%%.*}"
minor="${version#*.}"
minor="${minor%%.*}"
case "$major.$minor" in
  *[!0-9.]* | .* | *.)
    echo "berth verifier shim: could not read the version of $py (got '${version}'); a Python verifier needs Python 3.8 or newer" >&2
    exit 127
    ;;
esac
if [ "$major" -lt 3 ] || { [ "$major" -eq 3 ] && [ "$minor" -lt 8 ]; }; then
  echo "berth verifier shim: $py is Python $version; a Python verifier needs Python 3.8 or newer" >&2
  exit 127
fi

if [ -n "${BERTH_VERIFIER:-}" ]; then
  verifier="$BERTH_VERIFIER"
elif [ -f "$shim_dir/verifier.py" ]; then
  verifier="$shim_dir/verifier.py"
else
  verifier="$tests_dir/verifier.py"
fi

# -u: output reaches test-stdout.txt even if the timeout kills the runner; -B: no __pycache__ in /tests.
exec "$py" -u -B "$shim_dir/run_verifier.py" \
  --verifier "$verifier" \
  --workspace "$workspace" \
  --tests-dir "$tests_dir" \
  --task-data "$shim_dir/task_data.json" \
  --response "$shim_dir/response.json" \
  --reward-dir "$reward_dir"
