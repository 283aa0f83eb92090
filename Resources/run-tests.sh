#!/usr/bin/env bash
# The test command of the README, and what .ci/run calls. From a fresh Debian 12 machine:
# installs what it needs, builds the plugin, runs the unit tests four times (plain, under
# AddressSanitizer+UndefinedBehaviorSanitizer, under ThreadSanitizer, built for aarch64 under
# qemu-user: Resources/run-aarch64-tests.sh), fuzzes every parser of
# outside input for 30 s (libFuzzer, Resources/run-fuzzers.sh), and runs the integration tests
# against real Orthanc processes (Debian 12's 1.10.1, Debian 13's 1.12.7 and Debian unstable's 1.13.0,
# these two in cached roots),
# the ThreadSanitizer and aarch64 builds and the fuzzers beside them (the tests mostly wait);
# storescu and HTTP clients on loopback, the sanitized plugin inside Orthanc included, the page of
# /perf/ui/ in headless Chromium (screenshots in build/ui-screenshot.png and, 800 px wide,
# build/ui-screenshot-800.png), the Debian package installed, upgraded, removed and purged in
# Debian 12 and 13 roots (logs in build/package-test/), the Prometheus alert rules; last,
# Orthanc's own integration suite with and without the plugin where a checkout of it is present
# (Resources/run-orthanc-suite.sh; skipped, saying so, where not).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
jobs="$(nproc)"

step() { printf '\n=== %s\n' "$*"; }

step "dependencies"
./Resources/install-dependencies.sh

# The Debian roots (Orthanc 1.12.7 and 1.13.0 for the tests, Debian 12 and 13 for the package's test)
# are downloads and unpacking, not computation: they are made (once, then cached) beside the builds.
mkdir -p build-roots
roots_log="build-roots/make-roots.log"
( ./Resources/make-debian-root.sh trixie && ./Resources/make-debian-root.sh sid && ./Resources/make-package-roots.sh ) \
  >"$roots_log" 2>&1 &
roots_pid=$!

build() {  # folder, extra cmake arguments...
  local folder="$1" start=$SECONDS; shift
  cmake -S . -B "$folder" -G Ninja -DINGEST_PERF_WERROR=ON "$@" >/dev/null
  # No line per compiled file; the compiler's messages still print.
  ninja --quiet -C "$folder" -j "$jobs"
  echo "$folder: built in $((SECONDS - start)) s"
}

step "format (clang-format, .clang-format)"
mapfile -t format_files < <(find Plugin UnitTests Benchmarks Fuzzing -name '*.cpp' -o -name '*.h' | sort)
clang-format --dry-run -Werror "${format_files[@]}"
echo "clang-format: ${#format_files[@]} files clean"

step "layers (the includes of Plugin/ against the order of docs/development.md's module map)"
./.venv/bin/python -m pytest -q -p no:cacheprovider IntegrationTests/test_layers.py

step "build (RelWithDebInfo, with the micro-benchmarks: they must compile; Resources/run-benchmarks.sh runs them)"
build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINGEST_PERF_FAULT_INJECTION=ON -DINGEST_PERF_BUILD_BENCHMARKS=ON
step "unit tests"
./build/UnitTests --gtest_brief=1

step "unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (and the sanitized plugin the integration tests load)"
build build-asan -DCMAKE_BUILD_TYPE=Debug -DINGEST_PERF_SANITIZE=address,undefined
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ./build-asan/UnitTests --gtest_brief=1

step "the Debian roots: Orthanc 1.12.7 and 1.13.0 (build-roots/), Debian 12 and 13 for the package (build-roots-pkg/)"
if ! wait "$roots_pid"; then
  tail -n 40 "$roots_log"
  echo "making the Debian roots failed (whole log: $roots_log)" >&2
  exit 1
fi
cat "$roots_log"

step "integration tests (real Orthanc 1.10.1, 1.12.7 and 1.13.0, storescu, HTTP clients), ThreadSanitizer, aarch64 and fuzzing beside them"
# The tests wait on Orthanc and its clients far more than they compute (the whole suite keeps the
# two cores less than half busy): the ThreadSanitizer build and tests and the fuzzers run beside
# them at a lower priority (nice 10), on the CPU the tests leave; their output follows the tests'.
beside_log="build/beside-integration-tests.log"
(
  set -e
  renice -n 10 -p "$BASHPID" >/dev/null
  echo "=== unit tests under ThreadSanitizer"
  build build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINGEST_PERF_SANITIZE=thread
  TSAN_OPTIONS=halt_on_error=1 ./build-tsan/UnitTests --gtest_brief=1
  echo "=== unit tests on aarch64 (g++-aarch64-linux-gnu, under qemu-user)"
  JOBS="$jobs" ./Resources/run-aarch64-tests.sh
  echo "=== fuzzing (libFuzzer, 30 s per target)"
  # Every parser of outside input, from its seeds, two targets at a time (build-fuzz/, clang-14).
  ./Resources/run-fuzzers.sh 30
) >"$beside_log" 2>&1 &
beside_pid=$!
# -q: one line per test file as it finishes (IntegrationTests/conftest.py), failures at the end.
# -n 3: three workers on two cores, each running whole files (--dist loadfile: a file's Orthancs and
# module fixtures stay on one worker).
integration_status=0
INGEST_PERF_PLUGIN="$repo/build/libOrthancIngestPerf.so" ./.venv/bin/python -m pytest -q -n 3 --dist loadfile \
  IntegrationTests "$@" || integration_status=$?
# IntegrationTests/test_ui.py drives the page of /perf/ui/ in headless Chromium and saves it.
[ ! -f build/ui-screenshot.png ] || echo "the page /perf/ui/, as the browser showed it: build/ui-screenshot.png"
[ ! -f build/ui-screenshot-800.png ] || echo "the same, 800 px wide: build/ui-screenshot-800.png"
[ ! -d build/package-test ] || echo "the Debian package's install logs: build/package-test/debian12.log, debian13.log"
beside_status=0
wait "$beside_pid" || beside_status=$?
cat "$beside_log"
if [ "$beside_status" -ne 0 ] || [ "$integration_status" -ne 0 ]; then
  echo "failed: integration tests (exit $integration_status), ThreadSanitizer or aarch64 unit tests or fuzzing (exit $beside_status)" >&2
  exit 1
fi

step "Orthanc's own integration suite with and without the plugin, ingest tests, every mode (when a checkout is present)"
INGEST_PERF_PLUGIN="$repo/build/libOrthancIngestPerf.so" ./Resources/run-orthanc-suite.sh \
  --tests "ingest,-test_anonymize_relationships*,-test_modify_study_module_reconstruction"
