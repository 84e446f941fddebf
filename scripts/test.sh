#!/usr/bin/env bash
# Installs dependencies, builds everything and runs all tests (unit, end-to-end, conformance samples).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
(cd build && ctest --output-on-failure -j 2)
