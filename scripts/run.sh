#!/usr/bin/env bash
# The main job: installs dependencies, builds berth and simulates the example cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --target berth
build/berth simulate --config examples/simulate/config.yaml -f examples/simulate/cluster.yaml --output table "$@"
