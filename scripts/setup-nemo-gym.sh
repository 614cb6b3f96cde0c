#!/usr/bin/env bash
# NeMo Gym from PyPI in a venv of its own, for the anchor test that runs NeMo Gym's own rollout collection against
# `berth serve` (test/serve/nemo-gym-anchor.test.ts, docs/training.md). NeMo Gym 0.7 needs Python >= 3.13.14 and
# Debian bookworm has 3.11, so the venv is made from the CPython Berth already builds for openhands
# (scripts/build-cpython.sh, Debian's python3.13 source built in a berth-base:bookworm container).
#
#   scripts/setup-nemo-gym.sh        # npm run setup -- nemo-gym; also a step of `setup.sh --tests`
#
# Cached under BERTH_HOME/tools/nemo-gym-<version> (a .complete file marks a finished install); a second run on a
# ready machine changes nothing. One install at a time (flock).
#
# That CPython is built for the prefix /opt/berth/python3.13 (its RPATH names /opt/berth/python3.13/lib, where the
# libraries its modules link are copied), because it is meant to be mounted there in a container. On the host it runs
# from its own folder (Python finds its standard library beside its executable); so that its modules load the
# libraries it was built with rather than whatever the host has, /opt/berth/python3.13 is made a symlink to the build
# when nothing is there. Left alone when something already is (another Berth build of the same series bundles the
# same bookworm libraries); the install ends by importing every module that links one.
set -euo pipefail

NEMO_GYM_VERSION="0.7.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BERTH_HOME="${BERTH_HOME:-$HOME/.berth}"
mkdir -p "$BERTH_HOME/logs" "$BERTH_HOME/tools"

die() { echo "setup-nemo-gym: error: $*" >&2; exit 1; }

cpython_version="$(sed -n 's/^VERSION="\(.*\)"$/\1/p' "$ROOT/scripts/build-cpython.sh")"
series="$(sed -n 's/^SERIES="\(.*\)"$/\1/p' "$ROOT/scripts/build-cpython.sh")"
cpython_prefix="/opt/berth/python$series"   # build-cpython.sh's PREFIX
[ -n "$cpython_version" ] && [ -n "$series" ] || die "cannot read VERSION and SERIES from scripts/build-cpython.sh"
cpython="$BERTH_HOME/tools/cpython-$cpython_version"
venv="$BERTH_HOME/tools/nemo-gym-$NEMO_GYM_VERSION"

installed() {
  [ -f "$venv/.complete" ] && [ -x "$venv/bin/ng_collect_rollouts" ] &&
    "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('nemo-gym') != '$NEMO_GYM_VERSION')" 2>/dev/null
}
if installed; then
  echo "nemo-gym $NEMO_GYM_VERSION present ($venv)"
  exit 0
fi

exec 9>"$venv.lock"
flock 9
installed && { echo "nemo-gym $NEMO_GYM_VERSION present ($venv)"; exit 0; }

# The build is idempotent and takes one lock per folder: a build already under way is waited for, not started twice.
if [ ! -f "$cpython/.complete" ]; then
  echo "setup-nemo-gym: building CPython $cpython_version (scripts/build-cpython.sh, about 10 minutes; log $BERTH_HOME/logs/cpython-build.log)"
  bash "$ROOT/scripts/build-cpython.sh" "$cpython" >"$BERTH_HOME/logs/cpython-build.log" 2>&1 \
    || { tail -n 20 "$BERTH_HOME/logs/cpython-build.log" >&2; die "building CPython $cpython_version failed; see $BERTH_HOME/logs/cpython-build.log"; }
fi

if [ ! -e "$cpython_prefix" ] && [ ! -L "$cpython_prefix" ]; then
  # Without the right to write there (not root), the modules load the host's own copies of those libraries.
  { mkdir -p "$(dirname "$cpython_prefix")" && ln -s "$cpython/prefix" "$cpython_prefix"; } 2>/dev/null \
    || echo "setup-nemo-gym: could not link $cpython_prefix to $cpython/prefix; CPython's modules use the host's libraries" >&2
fi

python="$cpython/prefix/bin/python$series"
rm -rf "$venv"
log="$BERTH_HOME/logs/nemo-gym-pip.log"
# The interpreter's own ensurepip brings pip into the venv (the build bundles its wheel).
{ "$python" -m venv "$venv" && "$venv/bin/python" -m pip install --disable-pip-version-check "nemo-gym==$NEMO_GYM_VERSION"; } >"$log" 2>&1 \
  || { tail -n 20 "$log" >&2; die "pip install nemo-gym==$NEMO_GYM_VERSION with CPython $cpython_version failed; see $log"; }
"$venv/bin/python" -c 'import ssl, ctypes, sqlite3, lzma, bz2, zlib, uuid, decimal; import nemo_gym.rollout_collection, nemo_gym.token_id_capture.records' >>"$log" 2>&1 \
  || { tail -n 20 "$log" >&2; die "nemo-gym $NEMO_GYM_VERSION does not import in $venv; see $log"; }
touch "$venv/.complete"
echo "installed nemo-gym $NEMO_GYM_VERSION with CPython $cpython_version ($venv)"
