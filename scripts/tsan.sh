#!/usr/bin/env bash
# Builds the tests of Berth's threaded code with ThreadSanitizer (GCC, -O1 -g1, in build-tsan/)
# and runs them. Any report fails the run (halt_on_error), and so does a test failure.
#   bash scripts/tsan.sh [GTEST_FILTER]
# Covered: the binding executor and the scheduler's threaded binding path (scheduler tests
# without inline_binding), the scheduling queue, the parallelizer, the HTTP server and client,
# the REST client, informers, the asynchronous writer and leader election (client tests, against
# the embedded API server, so its store and watch fan-out run threaded too), the manifest
# decoder's runs on several threads (api tests), and the extender client and SDK server (whose
# I/O threads share decoded arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-*}
tests=(berth_scheduler_test berth_queue_test berth_framework_test berth_net_test
       berth_client_test berth_apiserver_test berth_api_test berth_extender_test)

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Paths relative to the checkout, so another clone (CI's) reuses the compiler cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Release -DBERTH_TSAN=ON \
  "${launcher[@]}" >/dev/null
cmake --build build-tsan -j "${JOBS:-2}" --target "${tests[@]}"

# second_deadlock_stack: lock-order reports show where both locks were taken.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 history_size=4 ${TSAN_OPTIONS:-}"
failed=()
for t in "${tests[@]}"; do
  log=build-tsan/$t.log
  start=$SECONDS
  if ./build-tsan/"$t" --gtest_filter="$filter" >"$log" 2>&1 && ! grep -q "ThreadSanitizer" "$log"; then
    echo "tsan: $t passed ($((SECONDS - start)) s, $(grep -c '^\[       OK' "$log") tests)"
  else
    grep -B2 -A60 "ThreadSanitizer\|FAILED" "$log" | head -150 >&2 || tail -60 "$log" >&2
    echo "tsan: $t failed; full output in $log" >&2
    failed+=("$t")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "tsan: failures in ${failed[*]}" >&2; exit 1; }
