#!/usr/bin/env bash
# Builds the plugin (optimized, no tests) and installs it into Orthanc's plugin folder. Used by
# docker/Dockerfile after Resources/install-dependencies.sh, and by the integration tests with a
# temporary DESTDIR, so the image recipe is the tested one.
#   DESTDIR=""                          prefix for a staged install
#   PLUGIN_DIR=/usr/share/orthanc/plugins
#   BUILD_DIR=<repo>/build-release
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${BUILD_DIR:-$repo/build-release}"
plugin_dir="${DESTDIR:-}${PLUGIN_DIR:-/usr/share/orthanc/plugins}"

cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build_dir" OrthancIngestPerf
install -D -m 0644 "$build_dir/libOrthancIngestPerf.so" "$plugin_dir/libOrthancIngestPerf.so"
echo "installed $plugin_dir/libOrthancIngestPerf.so"
