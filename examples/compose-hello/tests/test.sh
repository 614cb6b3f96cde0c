#!/usr/bin/env bash
# Reward 1 when the greeting was written and the sidecar's log (copied by the collect hook) shows it was asked.
if [ "$(cat /app/greeting.txt 2>/dev/null)" = "Hello from the greeter!" ] && grep -q 'GET /greeting' /shared/requests.log 2>/dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo "greeting: $(cat /app/greeting.txt 2>&1); sidecar log: $(cat /shared/requests.log 2>&1)"
  echo 0 > /logs/verifier/reward.txt
fi
