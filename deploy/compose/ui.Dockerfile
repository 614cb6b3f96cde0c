# The Temporal UI server as scripts/setup-temporal-cluster.sh builds it, with the environment contract of
# temporalio/ui that docker-compose.yaml uses (TEMPORAL_ADDRESS; it listens on 8080).
FROM berth-base:bookworm
COPY temporal-ui-server /usr/local/bin/
COPY ui-entrypoint.sh /usr/local/bin/
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/ui-entrypoint.sh"]
