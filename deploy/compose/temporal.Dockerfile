# temporal-server and temporal-sql-tool as scripts/setup-temporal-cluster.sh builds them, with the environment
# contract of temporalio/auto-setup that docker-compose.yaml uses (DB, DB_PORT, POSTGRES_SEEDS, POSTGRES_USER,
# POSTGRES_PWD): it creates or updates the schemas, then starts the services SERVICES names (default all four).
FROM berth-base:bookworm
COPY temporal-server temporal-sql-tool /usr/local/bin/
COPY schema /etc/temporal/schema
COPY temporal-entrypoint.sh /usr/local/bin/
EXPOSE 7233
ENTRYPOINT ["/usr/local/bin/temporal-entrypoint.sh"]
