#!/usr/bin/env bash
# The main job in one command, from any directory, on a fresh Debian 12 machine (as root, or
# with sudo): installs the dependencies, builds the plugin, then runs ingest_perf/main_job.py,
# which ingests a synthetic CT series into a real Orthanc over C-STORE (DCMTK storescu, one
# association) and over HTTP (POST /instances, keep-alive), prints the /perf/stats report of
# each and compares them.
#
# Environment:
#   SLICES=100            number of 512x512 slices
#   BUILD_DIR=<repo>/build
#   BUILD_TYPE=RelWithDebInfo   CMAKE_BUILD_TYPE (measure an optimized build)
#   CMAKE_ARGS=""         extra cmake arguments, e.g. "-DINGEST_PERF_BUILD_TESTS=OFF"
#   TCP_NODELAY           passed through: DCMTK (storescu and Orthanc's C-STORE server) reads it
# Work folder: <repo>/work/main-job (series, Orthanc storage and log, raw stats-*.json).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$repo/build}"
slices="${SLICES:-100}"
read -r -a cmake_args <<< "${CMAKE_ARGS:-}"

echo "== Dependencies"
"$repo/Resources/install-dependencies.sh"

echo "== Build ($build_dir, ${BUILD_TYPE:-RelWithDebInfo})"
cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "${cmake_args[@]}" >/dev/null
if grep -Eq '^INGEST_PERF_SANITIZE:STRING=.+' "$build_dir/CMakeCache.txt"; then
  echo "warning: $build_dir is configured with sanitizers (INGEST_PERF_SANITIZE): timings will be inflated" >&2
fi
# Only the plugin: the main job does not need the unit tests or the benchmarks.
ninja --quiet -C "$build_dir" OrthancIngestPerf

echo "== Main job ($slices slices)"
exec "$repo/.venv/bin/python" -m ingest_perf.main_job \
  --slices "$slices" --plugin "$build_dir/libOrthancIngestPerf.so" --work-dir "$repo/work/main-job"
