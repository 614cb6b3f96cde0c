#!/usr/bin/env bash
# The S3-compatible server the results-store tests run (test/helpers/s3-server.ts), built from source once:
#   bash scripts/setup-s3.sh      build `weed` (once) into ~/.berth/tools/seaweedfs-<version>/bin/weed
# SeaweedFS (Apache-2.0) serves S3 from one static binary. MinIO's server is AGPL and its repository is in maintenance
# mode, so it is not the one built here. The module's go.mod has replace directives, which `go install mod@v` refuses:
# the module is downloaded, copied to a scratch folder and built there. Go's build cache is the machine's one.
# Each test starts a server of its own from this binary (own ports, own data folder); this script starts nothing.
set -euo pipefail

export BERTH_HOME="${BERTH_HOME:-$HOME/.berth}"
SEAWEED_MODULE="github.com/seaweedfs/seaweedfs"
SEAWEED_VERSION="v0.0.0-20261109003541-7506e5f91cd6"
TOOLS="$BERTH_HOME/tools/seaweedfs-20261109"
BIN="$TOOLS/bin/weed"
LOGS="$BERTH_HOME/logs"

mkdir -p "$TOOLS/bin" "$LOGS"
step_start=0
step() { step_start=$(date +%s.%N); printf 'setup s3: %-8s ' "$1"; }
done_step() { printf '%s (%.1fs)\n' "$1" "$(echo "$(date +%s.%N) - $step_start" | bc)"; }
die() { echo; echo "setup s3: error: $*" >&2; exit 1; }
[ -z "${1:-}" ] || die "unknown argument '$1' (use: npm run setup -- s3)"

# One build at a time on this machine (parallel test files or setups may ask at once): the second waits, then reuses.
exec 9>"$TOOLS/.lock"
flock 9

step weed
if [ -x "$BIN" ] && "$BIN" version >/dev/null 2>&1; then
  done_step "cached in $BIN"
  exit 0
fi
command -v go >/dev/null 2>&1 || die "building SeaweedFS needs Go (go.mod asks a recent one; Debian's golang-go is too old)"
log="$LOGS/seaweedfs-build.log"
echo "building weed from $SEAWEED_MODULE@$SEAWEED_VERSION (first time: several minutes on 2 cores; log $log)"
scratch="$(mktemp -d /tmp/berth-seaweedfs.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
(
  dir=$(go mod download -json "$SEAWEED_MODULE@$SEAWEED_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  cp -r "$dir/." "$scratch/src"
  chmod -R u+w "$scratch/src"
  cd "$scratch/src"
  s=$(date +%s)
  nice -n 10 go build -trimpath -o "$BIN.tmp" ./weed
  mv "$BIN.tmp" "$BIN"
  echo "built weed in $(( $(date +%s) - s ))s"
) >>"$log" 2>&1 || { tail -n 20 "$log" >&2; die "go build of weed failed; see $log"; }
done_step "$(grep -o 'built weed in [0-9]*s' "$log" | tail -n1), $BIN"
