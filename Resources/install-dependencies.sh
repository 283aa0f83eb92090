#!/usr/bin/env bash
# Installs everything the build, the tests, the main job and the benchmarks need on Debian 12:
# Debian packages (Orthanc, its SDK header, DCMTK, compilers), Debian's jsoncpp source and a project venv with the
# Python test tools. Idempotent: a second run installs nothing. Used by the README commands,
# by .ci/run (through the test command) and by docker/Dockerfile, so all three stay the same.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  orthanc orthanc-dev orthanc-gdcm orthanc-dicomweb orthanc-postgresql postgresql
  libgtest-dev libgmock-dev libbenchmark-dev
  dcmtk python3 python3-venv curl procps busybox
  dicom3tools libgdcm-tools  # called by Orthanc's own suite (Resources/run-orthanc-suite.sh)
  valgrind  # callgrind: instructions per instance (Benchmarks/instruction_count.py)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # --no-install-recommends keeps the Debian 'orthanc' service package from pulling extras;
  # we never use its systemd unit: tests start their own Orthanc processes on loopback.
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  # Debian starts the packaged service where an init system runs; our processes use their own
  # ports and folders, so it does not matter, but stop it to free CPU where we can.
  $SUDO service orthanc stop >/dev/null 2>&1 || true
fi

# jsoncpp is compiled into the plugin from Debian's source package (no static archive in Debian).
"$here/Resources/fetch-jsoncpp-source.sh"

venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import pytest, pydicom, pynetdicom, requests, numpy, matplotlib" 2>/dev/null; then
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/Resources/requirements.txt"
fi
