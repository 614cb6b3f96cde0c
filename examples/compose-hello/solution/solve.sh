#!/usr/bin/env bash
set -euo pipefail
python3 -c "import urllib.request; print(urllib.request.urlopen('http://greeter:8000/greeting').read().decode(), end='')" > "$GREETING_FILE"
