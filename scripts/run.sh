#!/usr/bin/env bash
# The main job: installs dependencies, builds berth and runs `berth up` in the foreground: an
# embedded, persistent Kubernetes API server with Berth scheduling, and demo nodes, ready for
# kubectl. Extra arguments go to `berth up` (e.g. --port 0, --data-dir DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --target berth
exec build/berth up --demo-nodes "${BERTH_DEMO_NODES:-8}" "$@"
