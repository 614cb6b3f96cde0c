# PostgreSQL from Debian, with the environment contract of the official postgres image that docker-compose.yaml
# uses (POSTGRES_USER, POSTGRES_PASSWORD, data in /var/lib/postgresql/data): for sites that pull no images.
FROM berth-base:bookworm
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
