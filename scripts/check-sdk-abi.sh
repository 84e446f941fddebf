#!/usr/bin/env bash
# The plugin SDK's ABI against the baseline recorded for the current BERTH_SDK_VERSION
# (docs/plugin-authoring.md, "ABI contract").
#
# Usage: check-sdk-abi.sh check|update SHIM_LIBRARY SOURCE_DIR BERTH_BINARY
#   SHIM_LIBRARY  libberth_sdk_abi.so (abi/sdk_abi.cc: every SDK header, full debug info)
#   BERTH_BINARY  the berth executable, whose dynamic symbols are the SDK's exports
#
# The baseline is two files under abi/, named after the SDK version:
#   berth-sdk-<N>.abi      abidw's dump of the SDK's types (layouts, members, bases, vtables)
#   berth-sdk-<N>.symbols  the berth binary's exported SDK symbols, demangled, sorted
# `check` fails when either differs, or when there is no .abi baseline for the current version
# (without a .symbols file, the symbols are not compared); `update` (the build target
# berth_sdk_abi_baseline) records them and removes older ones, except the baselines of the
# versions still loaded (kOldestCompatibleSdkVersion and up): against each of those, `check`
# also requires that the SDK only added (abidiff reports nothing removed or changed, and every
# symbol exported then is exported still).
set -euo pipefail
mode=$1 shim=$2 src=$3 berth=$4
header="$src/include/berth/framework/plugin_library.h"
version=$(sed -n 's/^#define BERTH_SDK_VERSION \([0-9][0-9]*\)$/\1/p' "$header")
[ -n "$version" ] || { echo "FAIL no BERTH_SDK_VERSION in $header"; exit 1; }
base="$src/abi/berth-sdk-$version"
oldest=$(sed -n 's/^inline constexpr uint32_t kOldestCompatibleSdkVersion = \([0-9][0-9]*\);$/\1/p' "$header")
[ -n "$oldest" ] || oldest=$version
for tool in abidw abidiff nm c++filt; do
  command -v "$tool" >/dev/null ||
    { echo "FAIL $tool not found (Debian: abigail-tools, binutils; scripts/install-deps.sh)"; exit 1; }
done
# The shim must cover every public header, or a type could change unseen.
for h in $(cd "$src/include" && find berth -name '*.h' | sort); do
  grep -qx "#include \"$h\"" "$src/abi/sdk_abi.cc" ||
    { echo "FAIL abi/sdk_abi.cc does not include $h"; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
abidw --no-corpus-path --no-comp-dir-path --no-show-locs --type-id-style hash \
  --out-file "$tmp/sdk.abi" "$shim"
# The SDK's symbols among the binary's exports: berth:: functions and variables, the vtables and
# type_info of berth:: classes, and the C entry points. Instantiations of std templates on SDK
# types are exported too (their visibility follows the SDK type's) but are not the contract.
have_symbols=0
[ -x "$berth" ] && have_symbols=1
[ "$have_symbols" -eq 0 ] || nm -D --defined-only "$berth" | awk '{print $3}' | c++filt |
  grep -E '^(berth::|berth_|(vtable|VTT|typeinfo|typeinfo name|construction vtable) for berth::)' |
  LC_ALL=C sort -u > "$tmp/sdk.symbols"

if [ "$mode" = update ]; then
  mkdir -p "$src/abi"
  for old in "$src"/abi/berth-sdk-*.abi "$src"/abi/berth-sdk-*.symbols; do
    [ -e "$old" ] || continue
    n=${old##*/berth-sdk-}
    n=${n%.*}
    [ "$n" -ge "$oldest" ] && [ "$n" -lt "$version" ] && continue  # still loaded: kept
    [ "${old%.*}" != "$base" ] && rm -v "$old"
  done
  cp "$tmp/sdk.abi" "$base.abi"
  echo "recorded $base.abi"
  if [ "$have_symbols" -eq 1 ]; then
    cp "$tmp/sdk.symbols" "$base.symbols"
    echo "recorded $base.symbols ($(wc -l < "$base.symbols") symbols)"
  fi
  exit 0
fi

refresh="refresh the baseline with: cmake --build <build> --target berth_sdk_abi_baseline"
if [ ! -f "$base.abi" ]; then
  echo "FAIL no ABI baseline for SDK version $version (abi/berth-sdk-$version.abi);"
  echo "     after bumping BERTH_SDK_VERSION, $refresh"
  exit 1
fi
failed=0
set +e
abidiff "$base.abi" "$tmp/sdk.abi" > "$tmp/diff"
rc=$?
set -e
if [ $((rc & 3)) -ne 0 ]; then
  echo "FAIL abidiff could not compare (exit $rc):"; cat "$tmp/diff"; exit 1
fi
if [ "$rc" -ne 0 ]; then
  echo "FAIL the SDK's types differ from abi/berth-sdk-$version.abi:"
  head -200 "$tmp/diff"
  failed=1
fi
removed="" added=""
if [ -f "$base.symbols" ]; then
  [ "$have_symbols" -eq 1 ] || { echo "FAIL no berth binary at $berth"; exit 1; }
  removed=$(LC_ALL=C comm -23 "$base.symbols" "$tmp/sdk.symbols")
  added=$(LC_ALL=C comm -13 "$base.symbols" "$tmp/sdk.symbols")
else
  echo "note: no abi/berth-sdk-$version.symbols; the exported symbols are not compared"
fi
if [ -n "$removed" ]; then
  echo "FAIL exported SDK symbols removed or changed since abi/berth-sdk-$version.symbols:"
  echo "$removed" | sed 's/^/  - /'
  failed=1
fi
if [ -n "$added" ]; then
  echo "FAIL exported SDK symbols added since abi/berth-sdk-$version.symbols:"
  echo "$added" | sed 's/^/  + /'
  failed=1
fi
# The older versions still loaded: the SDK may only have added to them.
for ((n = oldest; n < version; n++)); do
  old="$src/abi/berth-sdk-$n"
  [ -f "$old.abi" ] || { echo "FAIL no abi/berth-sdk-$n.abi, though SDK $n libraries load"; failed=1; continue; }
  set +e
  abidiff "$old.abi" "$tmp/sdk.abi" > "$tmp/diff-$n"
  rc=$?
  set -e
  if [ $((rc & 3)) -ne 0 ]; then
    echo "FAIL abidiff could not compare with abi/berth-sdk-$n.abi (exit $rc):"; cat "$tmp/diff-$n"; exit 1
  fi
  # Additions only: no incompatible change, and the summaries count nothing removed or changed.
  if [ $((rc & 8)) -ne 0 ] ||
     grep -Eq '(^|[^0-9])[1-9][0-9]* (Removed|Changed)' "$tmp/diff-$n"; then
    echo "FAIL SDK $version does not only add to SDK $n (libraries of SDK $n are still loaded):"
    head -200 "$tmp/diff-$n"
    failed=1
  fi
  if [ -f "$old.symbols" ] && [ "$have_symbols" -eq 1 ]; then
    gone=$(LC_ALL=C comm -23 "$old.symbols" "$tmp/sdk.symbols")
    if [ -n "$gone" ]; then
      echo "FAIL exported symbols of SDK $n are gone (libraries of SDK $n are still loaded):"
      echo "$gone" | sed 's/^/  - /'
      failed=1
    fi
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "The plugin SDK's ABI changed. If a library built against SDK version $version could"
  echo "break (a type's layout or virtual functions changed, a symbol removed or changed), bump"
  echo "BERTH_SDK_VERSION in include/berth/framework/plugin_library.h; in every case $refresh."
  exit 1
fi
echo "OK the SDK's ABI matches abi/berth-sdk-$version; it only adds to SDK $oldest..$((version - 1))"
