#!/usr/bin/env bash
set -euo pipefail
echo 'Hello, world!' > hello.txt
