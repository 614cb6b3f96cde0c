#!/usr/bin/env bash
# A real Temporal cluster on this machine, built from source once (no binary downloads):
#   bash scripts/setup-temporal-cluster.sh              build (once), start (or reuse) every daemon that is not running
#   bash scripts/setup-temporal-cluster.sh --stop       stop all of it (state kept)
#   bash scripts/setup-temporal-cluster.sh --kill NAME  kill -9 one daemon (postgres: an immediate stop, as a crash);
#                                                       a later run without arguments starts it again
#   bash scripts/setup-temporal-cluster.sh --images     build (once) and make the images docker-compose.yaml can run
#                                                       instead of pulled ones (deploy/compose/; docs/deployment.md)
# temporal-server, temporal-sql-tool (go.temporal.io/server) and the UI server (github.com/temporalio/ui-server/v2)
# come from their Go modules, cached under ~/.berth/tools/temporal-cluster-<server>-ui-<ui>/; PostgreSQL from
# Debian, as a cluster of its own (initdb on its own port, not the system service). Frontend, history, matching and
# the internal worker run as separate processes with 4 history shards, persistence and SQL visibility on PostgreSQL.
# State under ~/.berth/temporal-cluster/, logs under ~/.berth/logs/temporal-cluster/. A second run takes seconds.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export BERTH_HOME="${BERTH_HOME:-$HOME/.berth}"
TEMPORAL_VERSION="v1.30.8"      # the newest server whose module builds with Go 1.26.8 from the public proxy
                                # (1.30.9 asks Go 1.26.10; 1.31.x needs go.temporal.io/auto-scaled-workers, not published)
UI_VERSION="v2.55.0"            # the newest ui-server/v2 that builds with Go 1.26.8
PG_MAJOR=15                     # Debian bookworm's
TOOLS="$BERTH_HOME/tools/temporal-cluster-$TEMPORAL_VERSION-ui-$UI_VERSION"
BIN="$TOOLS/bin"
SCHEMA="$TOOLS/schema"
STATE="$BERTH_HOME/temporal-cluster"
LOGS="$BERTH_HOME/logs/temporal-cluster"
RUN="$STATE/run"
PGDATA="$STATE/postgres"
CONFIG="$STATE/config"

# Loopback ports clear of the dev server's (7233, 8233) and of the test suite's own dev servers (7633, 7733, ...).
PG_PORT=54330
FRONTEND_PORT=7333
FRONTEND_HTTP_PORT=7343
HISTORY_PORT=7334
MATCHING_PORT=7335
WORKER_PORT=7339
UI_PORT=8333
SHARDS=4
SERVICES=(history matching frontend worker)
DB_USER=temporal
DB_PASSWORD=temporal

mkdir -p "$BIN" "$STATE" "$LOGS" "$RUN" "$CONFIG"
step_start=0
step() { step_start=$(date +%s.%N); printf 'setup temporal-cluster: %-10s ' "$1"; }
done_step() { printf '%s (%.1fs)\n' "$1" "$(echo "$(date +%s.%N) - $step_start" | bc)"; }
die() { echo; echo "setup temporal-cluster: error: $*" >&2; exit 1; }
detach() { local log="$1"; shift; setsid nohup "$@" >>"$log" 2>&1 </dev/null 9>&- & echo $!; }

# One setup at a time (two test files may ask at once): the second waits, then reuses.
exec 9>"$STATE/.lock"
flock 9

# shellcheck source=daemons.sh
source "$(dirname "${BASH_SOURCE[0]}")/daemons.sh"

# PostgreSQL refuses to run as root: as root it runs as Debian's postgres user, which is given a way through
# (traverse only, by ACL) to its data directory under BERTH_HOME.
PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_answers() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; }
pg_running() { as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; }
stop_pid() {
  local name="$1" pid; pid=$(pid_of "$name")
  alive "$name" || { rm -f "$RUN/$name.pid"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do [ -d "/proc/$pid" ] || break; sleep 0.25; done
  [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$RUN/$name.pid"
}

case "${1:-}" in
  --stop)
    step stop
    stop_pid ui
    for s in frontend worker matching history; do stop_pid "$s"; done
    [ -d "$PGDATA" ] && pg_running && as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
    done_step "stopped (state kept in $STATE)"
    exit 0 ;;
  --kill)
    name="${2:-}"
    case "$name" in
      postgres) pg_running && as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" -m immediate -w stop >/dev/null ;;
      history|matching|frontend|worker|ui) alive "$name" && kill -KILL "$(pid_of "$name")" ;;
      *) die "--kill takes one of: postgres history matching frontend worker ui (not '$name')" ;;
    esac
    exit 0 ;;
  --images|"") ;;
  *) die "unknown argument '$1' (use: npm run setup -- temporal-cluster [--stop | --kill NAME | --images])" ;;
esac

# --- Debian packages -------------------------------------------------------------------------------
step packages
missing=()
[ -x "$PG_BIN/initdb" ] || missing+=("postgresql-$PG_MAJOR")
for pair in setfacl:acl bc:bc flock:util-linux curl:curl; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$LOGS/apt.log" 2>&1 \
    || die "apt-get install ${missing[*]} failed; see $LOGS/apt.log"
  done_step "installed ${missing[*]}"
else
  done_step "present"
fi

# --- binaries, built from the Go modules -------------------------------------------------------------
step binaries
if [ -x "$BIN/temporal-server" ] && [ -x "$BIN/temporal-sql-tool" ] && [ -x "$BIN/temporal-ui-server" ] && [ -d "$SCHEMA" ]; then
  done_step "cached in $BIN"
else
  command -v go >/dev/null 2>&1 || die "building Temporal needs Go >= 1.26.8 (golang-go from Debian is older: install a newer Go)"
  echo "building temporal-server, temporal-sql-tool, temporal-ui-server (first time: about 15 min on 2 cores; log $LOGS/build.log)"
  (
    # A module of our own per product, so each builds with the dependency versions its own go.mod asks (together,
    # the UI's newer nexus-rpc/sdk-go breaks the server's build).
    wrapper() { # wrapper DIR MODULE VERSION PACKAGE...
      local dir="$TOOLS/build/$1" mod="$2" version="$3"; shift 3
      mkdir -p "$dir"
      { printf 'module berth.local/%s-build\n\ngo 1.26.8\n\nrequire %s %s\n\n' "$(basename "$dir")" "$mod" "$version"
        for p in "$@"; do echo "tool $p"; done; } >"$dir/go.mod"
      (cd "$dir" && nice -n 19 go mod tidy)
    }
    build() { # build DIR NAME PACKAGE
      [ -x "$BIN/$2" ] && return 0
      local s; s=$(date +%s)
      (cd "$TOOLS/build/$1" && nice -n 19 go build -trimpath -ldflags "-s -w" -o "$BIN/$2.tmp" "$3")
      mv "$BIN/$2.tmp" "$BIN/$2"
      echo "built $2 in $(( $(date +%s) - s ))s"
    }
    wrapper server go.temporal.io/server "$TEMPORAL_VERSION" go.temporal.io/server/cmd/server go.temporal.io/server/cmd/tools/sql
    wrapper ui github.com/temporalio/ui-server/v2 "$UI_VERSION" github.com/temporalio/ui-server/v2/cmd/server
    build server temporal-server go.temporal.io/server/cmd/server
    build server temporal-sql-tool go.temporal.io/server/cmd/tools/sql
    build ui temporal-ui-server github.com/temporalio/ui-server/v2/cmd/server
    # The schemas ship inside the server module; kept beside the binaries so a run never needs the module cache.
    moddir=$(cd "$TOOLS/build/server" && go list -m -f '{{.Dir}}' go.temporal.io/server)
    rm -rf "$SCHEMA.tmp" && mkdir -p "$SCHEMA.tmp" && cp -r "$moddir/schema/postgresql" "$SCHEMA.tmp/" && chmod -R u+w "$SCHEMA.tmp"
    mv "$SCHEMA.tmp" "$SCHEMA"
  ) >>"$LOGS/build.log" 2>&1 || { tail -n 20 "$LOGS/build.log" >&2; die "go build failed; see $LOGS/build.log"; }
  done_step "$(grep -o '^built .* in [0-9]*s' "$LOGS/build.log" | tr '\n' ';' | sed 's/;$//')"
fi

# --- images for docker-compose.yaml, FROM the local base, holding these binaries ---------------------------
if [ "${1:-}" = --images ]; then
  exec 9>&-   # the binaries are there: a setup that starts the cluster need not wait for the image builds
  step images
  docker_cli=/usr/bin/docker; [ -x "$docker_cli" ] || docker_cli=docker
  ctx=$(mktemp -d); trap 'rm -rf "$ctx"' EXIT
  cp "$ROOT"/deploy/compose/* "$ctx/" && cp "$BIN/temporal-server" "$BIN/temporal-sql-tool" "$BIN/temporal-ui-server" "$ctx/" && cp -r "$SCHEMA" "$ctx/schema"
  made=()
  for pair in "postgres:berth-temporal-postgres:$PG_MAJOR" "temporal:berth-temporal:$TEMPORAL_VERSION" "ui:berth-temporal-ui:$UI_VERSION"; do
    file="${pair%%:*}"; tag="${pair#*:}"
    "$docker_cli" build -q -f "$ctx/$file.Dockerfile" -t "$tag" "$ctx" >>"$LOGS/images.log" 2>&1 || die "docker build of $tag failed; see $LOGS/images.log"
    made+=("$tag")
  done
  done_step "${made[*]}"
  echo "POSTGRES_IMAGE=${made[0]} TEMPORAL_IMAGE=${made[1]} TEMPORAL_UI_IMAGE=${made[2]}"
  exit 0
fi

# --- PostgreSQL: a cluster of our own -------------------------------------------------------------------
step postgres
if [ ! -f "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA"
  if [ "$(id -u)" = 0 ]; then
    chown postgres:postgres "$PGDATA"
    d="$PGDATA"; while d=$(dirname "$d"); [ "$d" != / ]; do
      runuser -u postgres -- test -x "$d" 2>/dev/null || setfacl -m u:postgres:x "$d"
    done
  fi
  pwfile=$(mktemp); echo "$DB_PASSWORD" >"$pwfile"; chmod 644 "$pwfile"
  as_pg "$PG_BIN/initdb" -D "$PGDATA" -U "$DB_USER" --pwfile="$pwfile" -A scram-sha-256 -E UTF8 >"$LOGS/initdb.log" 2>&1 \
    || { rm -f "$pwfile"; die "initdb failed; see $LOGS/initdb.log"; }
  rm -f "$pwfile"
  # Temporal's SQL stores take a connection per service per shard task; 200 leaves room for four services.
  printf "listen_addresses = '127.0.0.1'\nport = %s\nunix_socket_directories = '%s'\nmax_connections = 200\nfsync = on\n" \
    "$PG_PORT" "$PGDATA" >>"$PGDATA/postgresql.conf"
fi
if pg_running && pg_answers; then done_step "running at 127.0.0.1:$PG_PORT"; else
  touch "$LOGS/postgres.log"; [ "$(id -u)" = 0 ] && chown postgres "$LOGS/postgres.log"
  # The lock (fd 9) is not handed down: a PostgreSQL holding it would block every later setup.
  as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" -l "$LOGS/postgres.log" -w -t 60 start >/dev/null 9>&- || log_and_die postgres "did not start"
  head -n1 "$PGDATA/postmaster.pid" >"$RUN/postgres.pid"
  done_step "started at 127.0.0.1:$PG_PORT"
fi
head -n1 "$PGDATA/postmaster.pid" >"$RUN/postgres.pid"

# --- schemas: created, then brought to this server version's --------------------------------------------
step schemas
sql() { "$BIN/temporal-sql-tool" --plugin postgres12 --ep 127.0.0.1 -p "$PG_PORT" -u "$DB_USER" --pw "$DB_PASSWORD" "$@"; }
for db in temporal:temporal temporal_visibility:visibility; do
  name="${db%%:*}"; dir="$SCHEMA/postgresql/v12/${db#*:}/versioned"
  {
    sql --db "$name" create-database 2>&1 | grep -v "already exists" || true
    sql --db "$name" setup-schema -v 0.0 2>&1 | grep -v "already exists" || true
    sql --db "$name" update-schema -d "$dir"
  } >>"$LOGS/schema.log" 2>&1 || die "schema update of $name failed; see $LOGS/schema.log"
done
done_step "temporal and temporal_visibility at $(ls "$SCHEMA/postgresql/v12/temporal/versioned" | sort -V | tail -n1) / $(ls "$SCHEMA/postgresql/v12/visibility/versioned" | sort -V | tail -n1)"

# --- configuration --------------------------------------------------------------------------------------
datastore() { # datastore NAME DATABASE CONNECTIONS
  cat <<EOF
    $1:
      sql:
        pluginName: postgres12
        databaseName: $2
        connectAddr: "127.0.0.1:$PG_PORT"
        connectProtocol: tcp
        user: $DB_USER
        password: $DB_PASSWORD
        maxConns: $3
        maxIdleConns: $3
        maxConnLifetime: 1h
EOF
}
service() { # service NAME GRPC_PORT MEMBERSHIP_PORT [EXTRA]
  printf '  %s:\n    rpc:\n      grpcPort: %s\n      membershipPort: %s\n      bindOnLocalHost: true\n%s' "$1" "$2" "$3" "${4:-}"
}
{
  echo "log:"
  echo "  stdout: true"
  echo "  level: warn"
  echo "persistence:"
  echo "  defaultStore: default"
  echo "  visibilityStore: visibility"
  echo "  numHistoryShards: $SHARDS"
  echo "  datastores:"
  datastore default temporal 20
  datastore visibility temporal_visibility 10
  echo "global:"
  echo "  membership:"
  echo "    maxJoinDuration: 30s"
  echo "    broadcastAddress: 127.0.0.1"
  echo "services:"
  service frontend "$FRONTEND_PORT" 6333 "      httpPort: $FRONTEND_HTTP_PORT"$'\n'
  service history "$HISTORY_PORT" 6334
  service matching "$MATCHING_PORT" 6335
  service worker "$WORKER_PORT" 6339
  echo "clusterMetadata:"
  echo "  enableGlobalNamespace: false"
  echo "  failoverVersionIncrement: 10"
  echo "  masterClusterName: active"
  echo "  currentClusterName: active"
  echo "  clusterInformation:"
  echo "    active:"
  echo "      enabled: true"
  echo "      initialFailoverVersion: 1"
  echo "      rpcName: frontend"
  echo "      rpcAddress: 127.0.0.1:$FRONTEND_PORT"
  echo "dcRedirectionPolicy:"
  echo "  policy: noop"
  echo "dynamicConfigClient:"
  echo "  filepath: $CONFIG/dynamic.yaml"
  echo "  pollInterval: 10s"
} >"$CONFIG/cluster.yaml"
# A search attribute registered a moment ago is usable at once (workers start right after Berth registers them).
cat >"$CONFIG/dynamic.yaml" <<'EOF'
system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
EOF
mkdir -p "$CONFIG/ui"
echo "temporalGrpcAddress: 127.0.0.1:$FRONTEND_PORT" >"$CONFIG/ui/base.yaml"
printf 'host: 127.0.0.1\nport: %s\nenableUi: true\ndefaultNamespace: default\ndisableNewsFetch: true\nnotifyOnNewVersion: false\n' "$UI_PORT" >"$CONFIG/ui/cluster.yaml"

# --- Temporal services, one process each -------------------------------------------------------------------
TEMPORAL_CLI="${TEMPORAL_CLI:-$(command -v temporal || echo "$BERTH_HOME/tools/temporal-venv/bin/temporal")}"
frontend_ready() {
  "$TEMPORAL_CLI" operator cluster health --address "127.0.0.1:$FRONTEND_PORT" --command-timeout 3s \
    && "$TEMPORAL_CLI" operator namespace describe --address "127.0.0.1:$FRONTEND_PORT" --namespace temporal-system --command-timeout 3s
}
step services
started=()
for s in "${SERVICES[@]}"; do
  running "$s" temporal-server && continue
  detach "$LOGS/$s.log" "$BIN/temporal-server" --config-file "$CONFIG/cluster.yaml" --allow-no-auth start --service "$s" >"$RUN/$s.pid"
  started+=("$s")
done
wait_for frontend 120 frontend_ready
for s in "${SERVICES[@]}"; do alive "$s" || log_and_die "$s" "exited"; done
if [ "${#started[@]}" -gt 0 ]; then done_step "started ${started[*]}; frontend at 127.0.0.1:$FRONTEND_PORT, $SHARDS history shards"
else done_step "running; frontend at 127.0.0.1:$FRONTEND_PORT"; fi

step ui
if running ui temporal-ui-server; then done_step "running at http://127.0.0.1:$UI_PORT"; else
  detach "$LOGS/ui.log" "$BIN/temporal-ui-server" --root "$CONFIG" --config ui --env cluster start >"$RUN/ui.pid"
  wait_for ui 30 curl -sf --max-time 2 "http://127.0.0.1:$UI_PORT/api/v1/settings"
  done_step "started at http://127.0.0.1:$UI_PORT"
fi
echo "setup temporal-cluster: ready: TEMPORAL_ADDRESS=127.0.0.1:$FRONTEND_PORT BERTH_UI_URL=http://127.0.0.1:$UI_PORT"
