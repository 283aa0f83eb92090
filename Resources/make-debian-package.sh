#!/usr/bin/env bash
# Builds the Debian package of the plugin, on Debian 12 after Resources/install-dependencies.sh:
#   build-release/dist/orthanc-ingest-perf_<version>_amd64.deb
# from what Resources/make-release.sh stages for the release archive (the same stripped and checked
# library, report, dashboard, alert rules and docs), then checks it with lintian (errors and warnings
# fail the build). Prints the package's path and SHA-256.
#   Resources/make-debian-package.sh [--version VERSION]   default: the project's version (CMakeLists.txt)
# What goes where (docs/loading.md#the-debian-package):
#   /usr/lib/orthanc/libOrthancIngestPerf.so.<version>, linked from /usr/share/orthanc/plugins/ (the
#     folder Debian's /etc/orthanc/orthanc.json loads), as Debian's own Orthanc plugins are
#   /etc/orthanc/ingest-perf.json, the IngestPerf section: a conffile (an edit survives upgrades)
#   /usr/bin/orthanc-ingest-perf-report and its man page (python3 recommended, standard library only)
#   /usr/share/orthanc-ingest-perf/: grafana-dashboard.json, prometheus-alerts.yml (and its unit
#     tests), the report's launcher and module
#   /usr/share/doc/orthanc-ingest-perf/: copyright (the licence and third-party notices), changelog,
#     NOTICE, README.md, docs/ (the reference)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
build="${BUILD_DIR:-$repo/build-release}"
upstream="$(sed -n 's/^project(OrthancIngestPerf VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
version="$upstream"
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version="$2"; shift 2 ;;
    *) echo "usage: $0 [--version VERSION]" >&2; exit 2 ;;
  esac
done
# A native package (no Debian revision): its version is the project's, or one given for a rebuild.
[[ "$version" =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || { echo "not a native Debian version: $version" >&2; exit 2; }

# The staged files are read below: no other build of the folder until this script exits (the lock
# of make-release.sh, which the call below is told it holds).
mkdir -p "$build"
exec 9>"$build/.lock"
flock 9
INGEST_PERF_RELEASE_LOCKED=1 BUILD_DIR="$build" ./Resources/make-release.sh >/dev/null
stage="$build/dist/orthanc-ingest-perf-$upstream-linux-x86_64"
package=orthanc-ingest-perf
root="$build/deb/${package}_${version}_amd64"
deb="$build/dist/${package}_${version}_amd64.deb"
rm -rf "$root" "$deb"
share="$root/usr/share/$package"
doc="$root/usr/share/doc/$package"
install -d -m 0755 "$root/DEBIAN" "$root/etc/orthanc" "$root/usr/bin" "$root/usr/lib/orthanc" \
  "$root/usr/share/orthanc/plugins" "$share/python/ingest_perf" "$doc" "$root/usr/share/man/man1" \
  "$root/usr/share/lintian/overrides"

install -m 0644 "$stage/libOrthancIngestPerf.so" "$root/usr/lib/orthanc/libOrthancIngestPerf.so.$upstream"
ln -s "../../../lib/orthanc/libOrthancIngestPerf.so.$upstream" "$root/usr/share/orthanc/plugins/libOrthancIngestPerf.so"
install -m 0644 Resources/debian/ingest-perf.json "$root/etc/orthanc/ingest-perf.json"
install -m 0755 "$stage/orthanc-ingest-perf-report" "$share/"
install -m 0644 "$stage"/python/ingest_perf/*.py "$share/python/ingest_perf/"
install -m 0644 "$stage/python/__main__.py" "$share/python/"
ln -s "../share/$package/orthanc-ingest-perf-report" "$root/usr/bin/orthanc-ingest-perf-report"
gzip -9n <"$stage/orthanc-ingest-perf-report.1" >"$root/usr/share/man/man1/orthanc-ingest-perf-report.1.gz"
install -m 0644 "$stage/grafana-dashboard.json" "$stage/prometheus-alerts.yml" "$stage/prometheus-alerts.test.yml" "$share/"
install -m 0644 "$stage/NOTICE" "$stage/README.md" "$doc/"
install -m 0644 Resources/debian/lintian-overrides "$root/usr/share/lintian/overrides/$package"
(cd "$stage/docs" && find . -type f | sort | while read -r file; do install -D -m 0644 "$file" "$doc/docs/$file"; done)

# copyright: the DEP-5 paragraphs, then the whole AGPL (not in /usr/share/common-licenses).
{
  cat Resources/debian/copyright
  sed -e 's/^[[:space:]]*$/./' -e 's/^/ /' LICENSE
} >"$doc/copyright"
chmod 0644 "$doc/copyright"
commit="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
date="$(git log -1 --format=%cD 2>/dev/null || date -R)"
maintainer="orthanc-ingest-perf developers <orthanc-ingest-perf@users.noreply.github.com>"
cat <<CHANGELOG | gzip -9n >"$doc/changelog.gz"
$package ($version) unstable; urgency=medium

  * Built from commit $commit by Resources/make-debian-package.sh.
  * What changed: the project's NEWS.

 -- $maintainer  $date
CHANGELOG

# Dependencies: Orthanc, and the C and C++ runtimes the library needs (dpkg-shlibdeps, from their
# symbols files: glibc 2.32 and libstdc++ of GCC 11 at least).
shlibs="$(mktemp -d)"
trap 'rm -rf "$shlibs"' EXIT
mkdir "$shlibs/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: amd64\n' "$package" "$package" >"$shlibs/debian/control"
runtime="$(cd "$shlibs" && dpkg-shlibdeps -O "$root/usr/lib/orthanc/libOrthancIngestPerf.so.$upstream" 2>/dev/null \
  | sed -n 's/^shlibs:Depends=//p')"
[ -n "$runtime" ] || { echo "dpkg-shlibdeps found no dependency" >&2; exit 1; }
size="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
cat >"$root/DEBIAN/control" <<CONTROL
Package: $package
Version: $version
Architecture: amd64
Maintainer: $maintainer
Installed-Size: $size
Depends: orthanc (>= 1.10.1), $runtime
Recommends: python3
Section: science
Priority: optional
Description: Orthanc plugin timing every phase of DICOM ingest
 Loaded into Orthanc, the lightweight DICOM server, it times every phase of
 ingesting an instance (receiving, transcoding, storing and indexing, the gap
 between two instances of a C-STORE association, the dispatch of changes) and
 says where the time goes and what to change: GET /perf/diagnosis, the page
 /perf/ui/, Prometheus metrics at /perf/metrics, and a report command.
 .
 This package holds the plugin, in the folder Debian's Orthanc loads its
 plugins from, its configuration section in /etc/orthanc/ingest-perf.json,
 the command orthanc-ingest-perf-report, a Grafana dashboard and Prometheus
 alert rules. Restart Orthanc to load it.
CONTROL
echo "/etc/orthanc/ingest-perf.json" >"$root/DEBIAN/conffiles"
(cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum >DEBIAN/md5sums)
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"

SOURCE_DATE_EPOCH="$(git log -1 --format=%ct 2>/dev/null || date +%s)" \
  dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
if command -v lintian >/dev/null; then
  # Errors and warnings fail; informational tags are printed.
  if ! lintian --fail-on error,warning --info "$deb" >"$build/dist/lintian.log" 2>&1; then
    cat "$build/dist/lintian.log" >&2
    echo "lintian: $deb has errors or warnings (above)" >&2
    exit 1
  fi
  sed 's/^/lintian: /' "$build/dist/lintian.log"
else
  echo "lintian: not installed (Resources/install-dependencies.sh installs it): the package is not checked" >&2
fi
echo "$deb"
(cd "$build/dist" && sha256sum "$(basename "$deb")")
