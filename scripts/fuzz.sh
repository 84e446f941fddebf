#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with Clang (ASan + UBSan, in build-fuzz/) and runs each
# for SECONDS (default 20) from a seed corpus made of the project's own fixtures. A crash, leak,
# sanitizer report or timeout fails the run and leaves the input in build-fuzz/artifacts/.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]     targets: quantity manifest selector config
#                                                   extender apiserver_input http cel protobuf
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(quantity manifest selector config extender apiserver_input http cel
                                     protobuf)

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Paths relative to the checkout, so another clone (CI's) reuses the compiler cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DBERTH_FUZZ=ON \
  "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j 2 --target "${targets[@]/#/berth_fuzz_}"

seeds=build-fuzz/seeds
rm -rf "$seeds" && mkdir -p "$seeds"/{quantity,manifest,selector,config,extender,apiserver_input,http,cel,protobuf} \
  build-fuzz/artifacts
i=0
for q in 0 1 100m 1.5 2Gi 500Mi 1e3 1E-3 0.001 -4 +7Ki 12345678901234567890 1.2.3 5Ei 1n 3u \
         .5 9223372036854775807m 110 32Gi; do
  printf '%s' "$q" > "$seeds/quantity/q$((i++))"
done
for s in 'app=web' 'app in (a,b),!canary' 'tier notin (db)' 'x!=y,z' 'spec.nodeName=' \
         'metadata.name=a,status.phase!=Running' 'a==b' 'k' '!k' 'environment in (production, qa)'; do
  printf '%s' "$s" > "$seeds/selector/s$((i++))"
done
for f in test/e2e/cases/*/cluster.yaml test/e2e/fixtures/*.yaml examples/simulate/*.yaml; do
  [ -f "$f" ] && cp "$f" "$seeds/manifest/$(echo "$f" | tr '/' '_')"
done
# JSON objects between "---" lines (read by the JSON parser), one in flow YAML with a comment.
printf '%s\n' '# generated' '---' '{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}}' \
  '---' '{apiVersion: v1, kind: Pod, metadata: {name: p}}  # flow YAML' '---' '---' \
  '{"apiVersion":"v1","kind":"NodeList","items":[{"metadata":{"name":"b"}}]}' \
  > "$seeds/manifest/json_stream.yaml"
for f in test/e2e/cases/*/config.yaml test/e2e/cases/*/*.json deploy/10-config.yaml; do
  [ -f "$f" ] && cp "$f" "$seeds/config/$(echo "$f" | tr '/' '_')"
done

# Extender documents in the shapes the fast readers take, and a few they hand on.
n=0
for d in '{"Pod":{"metadata":{"name":"p","labels":{"a":"b"}}},"Nodes":null,"NodeNames":["n1","n2"]}' \
         '{"Pod":{"metadata":{"name":"p"}},"Nodes":{"metadata":{},"items":[{"metadata":{"name":"a"}},{"kind":"Node","metadata":{"name":"b","labels":{"z":"1"}},"status":{"allocatable":{"cpu":"4"}}}]},"NodeNames":null}' \
         '{"Nodes":null,"NodeNames":["a","b"],"FailedNodes":{"c":"full"},"FailedAndUnresolvableNodes":{},"Error":""}' \
         '{"Nodes":{"metadata":{},"items":[{"metadata":{"name":"a"},"spec":{"taints":[{"key":"k"}]}}]},"NodeNames":null,"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""}' \
         '[{"Host":"a","Score":3},{"Host":"b","Score":-1},{"Score":2,"Host":"c"}]' \
         ' [ {"host" : "a\u0062", "score": 7 } ] ' 'null' '{"NodeNames":["n\u0031"],"Pod":{}}'; do
  printf '%s' "$d" > "$seeds/extender/e$((n++))"
done

# Writes the API server refuses (values of the wrong type where a list, a map, an int32, a
# quantity or a time belongs; names no URL can address), well-typed ones, and query values.
n=0
for d in '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"conditions":"x"}}' \
         '{"metadata":{"name":"n","labels":[1]}}' '{"metadata":{"labels":{"a":1}}}' \
         '{"status":{"containerStatuses":"x"}}' '{"metadata":{"name":"a/b"}}' \
         '{"metadata":{"name":".."}}' '{"metadata":{"generateName":"Web-"}}' \
         '{"spec":{"containers":[{"name":"c","ports":[{"containerPort":99999999999,"hostPort":99999}]}]}}' \
         '{"spec":{"replicas":1.5,"strategy":{"rollingUpdate":{"maxSurge":true}}}}' \
         '{"status":{"capacity":{"cpu":[1],"memory":"1x"},"conditions":[{"lastHeartbeatTime":"x"}]}}' \
         '{"metadata":{"name":"ok","creationTimestamp":"2026-11-28T15:00:00.5+01:00"},"data":{"k":"v"}}' \
         '{"metadata":null,"spec":{"containers":null}}' '-1' 'abc' ' +30 ' '9223372036854775808' \
         'application/json; charset=utf-8' 'text/plain'; do
  printf '%s' "$d" > "$seeds/apiserver_input/a$((n++))"
done
# A query value that is not UTF-8 once percent-decoded (once answered with a throw).
printf '1\311x' > "$seeds/apiserver_input/not_utf8"
# The manifest reader meets the same poison objects in files.
printf '%s\n' '{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"},"status":{"conditions":"x"}}' \
  '---' '{"apiVersion":"v1","kind":"Node","metadata":{"name":"b","labels":[1]}}' '---' \
  '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"status":{"containerStatuses":"x"}}' \
  > "$seeds/manifest/poison.yaml"
# DRA device selectors: the shapes DeviceClasses use, macros, quantities, versions, errors.
n=0
for e in 'device.driver == "gpu.example.com"' \
         'device.attributes["gpu.example.com"].model == "a100" && device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0' \
         'semver(device.attributes["dra.example.com"].driverVersion).isGreaterThan(semver("1.2.3"))' \
         '[1, 2, 3].all(x, x > 0) && {"a": 1}.exists(k, k == "a")' \
         '"abc".matches("^a.c$") ? 1u + 2u == 3u : b"x" == b"y"' '(1 + ' '9223372036854775807 + 1 > 0' \
         'has(device.attributes["x"].y) || size("\u00e9") == 1'; do
  printf '%s' "$e" > "$seeds/cel/c$((n++))"
done
# Raw requests, well-formed and not (each malformed kind the server answers with a status).
cp fuzz/corpus/http/*.http "$seeds/http/"
# Protobuf bodies: a whole envelope (v1 Pod, metadata.name "p"), and raw objects after the byte
# that picks the fuzzer's kind (0: Pod with a container; 1: Node with a capacity and a
# condition time; 5: Deployment with replicas 0 and a maxSurge int-or-string).
printf 'k8s\0\x0a\x09\x0a\x02v1\x12\x03Pod\x12\x05\x0a\x03\x0a\x01p' > "$seeds/protobuf/pod_envelope"
printf '\x00\x0a\x03\x0a\x01p\x12\x0c\x12\x0a\x0a\x01c\x12\x05nginx' > "$seeds/protobuf/pod"
printf '\x01\x1a\x1d\x0a\x0a\x0a\x03cpu\x12\x03\x0a\x014\x22\x0f\x0a\x05Ready\x1a\x06\x08\x80\xe2\xcf\xaa\x06' \
  > "$seeds/protobuf/node"
printf '\x05\x12\x0c\x08\x00\x22\x08\x12\x06\x12\x04\x08\x00\x10\x02' > "$seeds/protobuf/deployment"

for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t
  mkdir -p "$corpus"
  echo "fuzzing $t for ${seconds}s"
  log=build-fuzz/$t.log
  rc=0
  ./build-fuzz/berth_fuzz_"$t" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/"$t"- \
    "$corpus" "$seeds/$t" >"$log" 2>&1 || rc=$?
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units)" "$log" || true
  if [ "$rc" -ne 0 ]; then
    tail -40 "$log" >&2
    echo "berth_fuzz_$t found a failing input (exit $rc); see build-fuzz/artifacts/" >&2
    exit 1
  fi
done
