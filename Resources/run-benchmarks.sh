#!/usr/bin/env bash
# The benchmark command (README): installs what it needs, builds the plugin and the benchmarks
# (Release-like), then runs ingest_perf/benchmarks/run_benchmarks.py, which writes docs/measurements/benchmarks.md (or
# docs/measurements/benchmarks-quick.md with --quick). Separate from the test command: it takes ~25 minutes
# (--quick: a few). The plugin's whole cost is measured apart, by ingest_perf/benchmarks/process_cpu.py,
# route_cost.py and instruction_count.py (15-30 minutes each; docs/measurements/plugin-cost.md has the commands),
# and Sockets/ProcessSocketsReading, built here.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
./Resources/install-dependencies.sh
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINGEST_PERF_BUILD_BENCHMARKS=ON \
  -DINGEST_PERF_BUILD_TESTS=OFF >/dev/null
ninja -C build-bench
exec ./.venv/bin/python -m ingest_perf.benchmarks.run_benchmarks --build build-bench "$@"
