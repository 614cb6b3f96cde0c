#!/usr/bin/env bash
# Reward 1 when hello.txt holds exactly the greeting, else 0.
if [ "$(cat /app/hello.txt 2>/dev/null)" = "Hello, world!" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo "hello.txt missing or wrong: $(cat /app/hello.txt 2>&1)"
  echo 0 > /logs/verifier/reward.txt
fi
