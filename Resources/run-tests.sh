#!/usr/bin/env bash
# The test command of the README, and what .ci/run calls. From a fresh Debian 12 machine:
# installs what it needs, builds the plugin, runs the unit tests three times (plain, under
# AddressSanitizer+UndefinedBehaviorSanitizer, under ThreadSanitizer), fuzzes every parser of
# outside input for 30 s (libFuzzer, Resources/run-fuzzers.sh), then the integration tests
# against real Orthanc processes (Debian 12's 1.10.1, and Debian 13's 1.12.7 in a cached root),
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

step "build (RelWithDebInfo)"
build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINGEST_PERF_FAULT_INJECTION=ON
step "unit tests"
./build/UnitTests --gtest_brief=1

step "unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
build build-asan -DCMAKE_BUILD_TYPE=Debug -DINGEST_PERF_SANITIZE=address,undefined
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ./build-asan/UnitTests --gtest_brief=1

step "unit tests under ThreadSanitizer"
build build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINGEST_PERF_SANITIZE=thread
TSAN_OPTIONS=halt_on_error=1 ./build-tsan/UnitTests --gtest_brief=1

step "fuzzing (libFuzzer, 30 s per target)"
# Every parser of outside input, from its seeds, two targets at a time (build-fuzz/, clang-14).
./Resources/run-fuzzers.sh 30

step "benchmarks compile (they are run by Resources/run-benchmarks.sh, not here)"
build build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINGEST_PERF_BUILD_BENCHMARKS=ON -DINGEST_PERF_BUILD_TESTS=OFF

step "Orthanc 1.12.7: the Debian 13 root (made once, then cached in build-roots/)"
./Resources/make-debian13-root.sh

step "the Debian package's roots: Debian 12 and 13 with Orthanc (made once, then cached in build-roots-pkg/)"
./Resources/make-package-roots.sh

step "integration tests (real Orthanc 1.10.1 and 1.12.7, storescu, HTTP clients)"
# -q: one line per test file as it finishes (IntegrationTests/conftest.py), failures at the end.
# -n: one worker per core, each running whole files (--dist loadfile: a file's Orthancs and module
# fixtures stay on one worker); the tests wait on Orthanc and its clients more than they compute,
# so two run side by side in about 60% of the time of one after the other (10.5 against 18 min).
INGEST_PERF_PLUGIN="$repo/build/libOrthancIngestPerf.so" ./.venv/bin/python -m pytest -q -n "$jobs" --dist loadfile \
  IntegrationTests "$@"
# IntegrationTests/test_ui.py drives the page of /perf/ui/ in headless Chromium and saves it.
[ ! -f build/ui-screenshot.png ] || echo "the page /perf/ui/, as the browser showed it: build/ui-screenshot.png"
[ ! -f build/ui-screenshot-800.png ] || echo "the same, 800 px wide: build/ui-screenshot-800.png"
[ ! -d build/package-test ] || echo "the Debian package's install logs: build/package-test/debian12.log, debian13.log"

step "Orthanc's own integration suite with and without the plugin, ingest tests, every mode (when a checkout is present)"
INGEST_PERF_PLUGIN="$repo/build/libOrthancIngestPerf.so" ./Resources/run-orthanc-suite.sh \
  --tests "ingest,-test_anonymize_relationships*,-test_modify_study_module_reconstruction"
