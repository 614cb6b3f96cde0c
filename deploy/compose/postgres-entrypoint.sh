#!/bin/bash
# First start: a database cluster owned by POSTGRES_USER with POSTGRES_PASSWORD, reachable over the network.
set -euo pipefail
: "${POSTGRES_USER:=postgres}" "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
mkdir -p "$PGDATA" /run/postgresql && chown -R postgres:postgres "$PGDATA" /run/postgresql && chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pw=$(mktemp) && echo "$POSTGRES_PASSWORD" >"$pw" && chown postgres "$pw"
  runuser -u postgres -- initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pw" -A scram-sha-256 -E UTF8 >/dev/null
  rm -f "$pw"
  echo "host all all 0.0.0.0/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  printf "listen_addresses = '*'\nmax_connections = 200\n" >>"$PGDATA/postgresql.conf"
fi
exec runuser -u postgres -- postgres -D "$PGDATA"
