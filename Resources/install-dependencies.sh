#!/usr/bin/env bash
# Installs everything the build, the tests, the main job and the benchmarks need on Debian 12:
# Debian packages (Orthanc, its SDK header, DCMTK, compilers), Debian's jsoncpp source and a project
# venv with the Python test tools and the project's own package (ingest_perf, pyproject.toml).
# Idempotent: a second run installs nothing. Used by the README commands, by .ci/run (through the
# test command) and by docker/Dockerfile, so all three stay the same.
# Prints one line per thing installed or already present; apt's and pip's own output goes to
# build-deps/install-dependencies.log, whose end is printed when a step fails.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$here/build-deps"
log="$here/build-deps/install-dependencies.log"
: >"$log"

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  orthanc orthanc-dev orthanc-gdcm orthanc-dicomweb orthanc-postgresql orthanc-python postgresql
  libgtest-dev libgmock-dev libbenchmark-dev
  dcmtk python3 python3-venv curl procps busybox
  dicom3tools libgdcm-tools  # called by Orthanc's own suite (Resources/run-orthanc-suite.sh)
  valgrind  # callgrind: instructions per instance (ingest_perf/benchmarks/instruction_count.py)
  strace  # the plugin's system calls inside a running Orthanc (IntegrationTests/test_guest_rules.py)
  clang-14 libclang-rt-14-dev  # libFuzzer and its sanitizers (Resources/run-fuzzers.sh)
  g++-aarch64-linux-gnu qemu-user  # the unit tests built for aarch64 and run (Resources/run-aarch64-tests.sh)
  prometheus  # promtool and a real server scraping /perf/metrics (IntegrationTests/test_prometheus*.py)
  chromium chromium-driver  # the page of /perf/ui/ in a real, headless browser (IntegrationTests/test_ui.py)
  lintian debootstrap  # the Debian package checked, and installed in Debian 12 and 13 roots (test_debian_package.py)
)

# quietly DESCRIPTION COMMAND...: runs COMMAND with its output in the log; on failure, says which
# step failed and shows the end of the log, then exits with COMMAND's code.
quietly() {
  local description="$1" code=0
  shift
  printf '\n$ %s\n' "$*" >>"$log"
  "$@" >>"$log" 2>&1 || code=$?
  if [ "$code" -ne 0 ]; then
    printf '\nFAILED: %s (exit code %d); the end of %s:\n' "$description" "$code" "$log" >&2
    tail -n 30 "$log" >&2
    exit "$code"
  fi
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  start=$SECONDS
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  printf 'Debian packages: installing %s ...' "${missing[*]}"
  quietly "apt-get update" $SUDO apt-get update -qq
  # --no-install-recommends keeps the Debian 'orthanc' service package from pulling extras;
  # we never use its systemd unit: tests start their own Orthanc processes on loopback.
  quietly "apt-get install" $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo " done in $((SECONDS - start)) s ($((${#packages[@]} - ${#missing[@]})) others were present)"
  # Debian starts the packaged service where an init system runs; our processes use their own
  # ports and folders, so it does not matter, but stop it to free CPU where we can.
  $SUDO service orthanc stop >/dev/null 2>&1 || true
else
  echo "Debian packages: all ${#packages[@]} present (orthanc $(dpkg-query -W -f='${Version}' orthanc), dcmtk $(dpkg-query -W -f='${Version}' dcmtk))"
fi

# jsoncpp is compiled into the plugin from Debian's source package (no static archive in Debian).
"$here/Resources/fetch-jsoncpp-source.sh"

venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  quietly "python3 -m venv" python3 -m venv "$venv"
  echo "Python venv: made in $venv"
else
  echo "Python venv: present in $venv"
fi
if ! "$venv/bin/python" -c "import pytest, xdist, pydicom, pynetdicom, requests, numpy, matplotlib, selenium" 2>/dev/null; then
  start=$SECONDS
  printf 'Python packages: installing Resources/requirements.txt ...'
  quietly "pip install" "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/Resources/requirements.txt"
  echo " done in $((SECONDS - start)) s"
else
  echo "Python packages: present ($("$venv/bin/python" -c 'from importlib.metadata import version as v; print("pytest %s, pynetdicom %s" % (v("pytest"), v("pynetdicom")))'))"
fi
# The project's own package (pyproject.toml), editable: the venv imports ingest_perf from this
# checkout, whatever the working directory (-I: not from the current folder).
installed() { "$venv/bin/python" -I -c 'import ingest_perf; print(ingest_perf.__file__)' 2>/dev/null; }
if [ "$(installed)" != "$here/ingest_perf/__init__.py" ]; then
  quietly "pip install -e ." "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -e "$here"
  echo "ingest_perf: installed, editable, from $here ($(installed))"
else
  echo "ingest_perf: installed, editable, from $here"
fi
