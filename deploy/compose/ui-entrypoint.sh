#!/bin/bash
set -euo pipefail
mkdir -p /etc/temporal-ui/config
printf 'temporalGrpcAddress: %s\nhost: 0.0.0.0\nport: %s\nenableUi: true\ndefaultNamespace: %s\ndisableNewsFetch: true\n' \
  "${TEMPORAL_ADDRESS:-temporal:7233}" "${TEMPORAL_UI_PORT:-8080}" "${TEMPORAL_DEFAULT_NAMESPACE:-default}" >/etc/temporal-ui/config/docker.yaml
exec temporal-ui-server --root /etc/temporal-ui --config config --env docker start
