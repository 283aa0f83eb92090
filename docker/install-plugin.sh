#!/usr/bin/env bash
# Builds the release archive (Resources/make-release.sh) and installs the plugin from it the way
# docs/loading.md tells an administrator to: check the SHA-256 sums, copy the library into
# Orthanc's plugin folder. Used by docker/Dockerfile after Resources/install-dependencies.sh, and
# by the integration tests with a temporary DESTDIR, so the image recipe is the tested one.
#   DESTDIR=""                          prefix for a staged install
#   PLUGIN_DIR=/usr/share/orthanc/plugins
#   BUILD_DIR=<repo>/build-release
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
plugin_dir="${DESTDIR:-}${PLUGIN_DIR:-/usr/share/orthanc/plugins}"

output="$("$repo/Resources/make-release.sh")"
archive="${output%%$'\n'*}"  # its first line
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
tar -C "$unpacked" -xzf "$archive"
cd "$unpacked"/orthanc-ingest-perf-*
sha256sum --quiet -c SHA256SUMS
install -D -m 0644 libOrthancIngestPerf.so "$plugin_dir/libOrthancIngestPerf.so"
echo "installed $plugin_dir/libOrthancIngestPerf.so from $(basename "$archive")"
