#!/usr/bin/env bash
# Installs every build and test dependency of Berth from Debian's packages.
set -euo pipefail
pkgs=(build-essential cmake ninja-build ccache pkg-config
      libyaml-dev nlohmann-json3-dev libsimdjson-dev libcli11-dev libfmt-dev libspdlog-dev
      libboost1.81-dev libssl-dev libsqlite3-dev libmimalloc-dev abigail-tools
      libre2-dev protobuf-compiler libprotobuf-dev libgtest-dev libgmock-dev libbenchmark-dev python3 python3-kubernetes jq curl openssl
      prometheus chromium clang libclang-rt-14-dev libtsan2)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
