#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing vramscope needs (clang and its
# runtimes, libFuzzer among them, for the asan preset and the fuzz targets), skipping what is
# already present. Run as root (or with sudo available). Safe to run again.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache git mold
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libgl-dev libqcustomplot-dev
  libprotobuf-dev protobuf-compiler libprotozero-dev
  libzstd-dev zlib1g-dev libsimdjson-dev nlohmann-json3-dev libarchive-dev libsqlite3-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-format python3
  clang libclang-rt-14-dev
  xvfb xauth
  # packaging: CPack's dependency scan, the install test, the desktop file validators, man pages
  dpkg-dev file desktop-file-utils appstream shared-mime-info groff-base man-db
  # review and export tests: pdftotext, pdfinfo, pdftoppm
  poppler-utils
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
