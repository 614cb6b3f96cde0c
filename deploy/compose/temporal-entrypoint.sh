#!/bin/bash
set -euo pipefail
: "${DB:=postgres12}" "${DB_PORT:=5432}" "${POSTGRES_SEEDS:?POSTGRES_SEEDS is required}" "${POSTGRES_USER:?}" "${POSTGRES_PWD:?}"
: "${DBNAME:=temporal}" "${VISIBILITY_DBNAME:=temporal_visibility}" "${NUM_HISTORY_SHARDS:=4}"
: "${SERVICES:=frontend,history,matching,worker}" "${SKIP_SCHEMA_SETUP:=false}"
[ "$DB" = postgres12 ] || { echo "temporal-entrypoint: DB=$DB: this image knows postgres12 only" >&2; exit 2; }
sql() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" --pw "$POSTGRES_PWD" "$@"; }
if [ "$SKIP_SCHEMA_SETUP" != true ]; then
  until (exec 3<>"/dev/tcp/$POSTGRES_SEEDS/$DB_PORT") 2>/dev/null; do
    echo "temporal-entrypoint: waiting for PostgreSQL at $POSTGRES_SEEDS:$DB_PORT"; sleep 1
  done
  for pair in "$DBNAME:temporal" "$VISIBILITY_DBNAME:visibility"; do
    db="${pair%%:*}"; dir="/etc/temporal/schema/postgresql/v12/${pair#*:}/versioned"
    sql --db "$db" create-database >/dev/null 2>&1 || true
    sql --db "$db" setup-schema -v 0.0 >/dev/null 2>&1 || true
    for try in 1 2 3 4 5; do sql --db "$db" update-schema -d "$dir" && break; [ "$try" = 5 ] && exit 1; sleep 2; done
  done
fi
ip=$(hostname -i | awk '{print $1}')
store() { printf '    %s:\n      sql:\n        pluginName: postgres12\n        databaseName: %s\n        connectAddr: "%s:%s"\n        connectProtocol: tcp\n        user: %s\n        password: "%s"\n        maxConns: 20\n        maxIdleConns: 20\n' \
  "$1" "$2" "$POSTGRES_SEEDS" "$DB_PORT" "$POSTGRES_USER" "$POSTGRES_PWD"; }
svc() { printf '  %s:\n    rpc:\n      grpcPort: %s\n      membershipPort: %s\n      bindOnIP: 0.0.0.0\n' "$1" "$2" "$3"; }
{
  printf 'log:\n  stdout: true\n  level: warn\npersistence:\n  defaultStore: default\n  visibilityStore: visibility\n  numHistoryShards: %s\n  datastores:\n' "$NUM_HISTORY_SHARDS"
  store default "$DBNAME"; store visibility "$VISIBILITY_DBNAME"
  printf 'global:\n  membership:\n    maxJoinDuration: 30s\n    broadcastAddress: "%s"\nservices:\n' "$ip"
  svc frontend 7233 6933; svc history 7234 6934; svc matching 7235 6935; svc worker 7239 6939
  printf 'clusterMetadata:\n  enableGlobalNamespace: false\n  failoverVersionIncrement: 10\n  masterClusterName: active\n  currentClusterName: active\n'
  printf '  clusterInformation:\n    active:\n      enabled: true\n      initialFailoverVersion: 1\n      rpcName: frontend\n      rpcAddress: "%s:7233"\n' "$ip"
  printf 'dcRedirectionPolicy:\n  policy: noop\ndynamicConfigClient:\n  filepath: /etc/temporal/dynamic.yaml\n  pollInterval: 10s\n'
} >/etc/temporal/config.yaml
printf 'system.forceSearchAttributesCacheRefreshOnRead:\n  - value: true\n' >/etc/temporal/dynamic.yaml
args=(); IFS=, read -ra list <<<"$SERVICES"; for s in "${list[@]}"; do args+=(--service "$s"); done
exec temporal-server --config-file /etc/temporal/config.yaml --allow-no-auth start "${args[@]}"
