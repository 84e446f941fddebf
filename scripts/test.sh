#!/usr/bin/env bash
# Installs dependencies, builds everything and runs all tests (unit, end-to-end, conformance
# samples), the threaded code's tests under ThreadSanitizer and, briefly, the fuzz targets.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
(cd build && ctest --output-on-failure -j 2)
# The tests of the threaded code (binding, queue, informers, leader election, API server watch
# fan-out) again under ThreadSanitizer, in build-tsan/; any report fails the run.
scripts/tsan.sh
# The readers under libFuzzer with ASan and UBSan (Clang), briefly; longer runs: scripts/fuzz.sh 600
scripts/fuzz.sh 15
