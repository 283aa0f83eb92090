#!/usr/bin/env bash
# Builds the self-contained plugin and packs it for a production host that has no compiler:
#   build-release/dist/orthanc-ingest-perf-<version>-linux-x86_64.tar.gz (+ .sha256)
# The archive holds what the docs point to: libOrthancIngestPerf.so (stripped; needs glibc >= 2.32
# and libstdc++ from GCC >= 11, nothing else), the report (orthanc-ingest-perf-report, Python 3's
# standard library only, and its man page), the Grafana dashboard, the Prometheus alert rules and
# their unit tests, a sample configuration (ingest-perf.json), LICENSE and NOTICE, the README, NEWS
# and docs/ (the reference, readable offline), INSTALL.txt, BUILD-INFO and SHA256SUMS of every file.
# Run on Debian 12 after Resources/install-dependencies.sh. Prints the archive's path and SHA-256.
# Resources/make-debian-package.sh makes the Debian package from the same staged files.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$repo/build-release}"
cd "$repo"
# One build of the folder at a time (the tests run the archive's and the package's side by side):
# the lock is held until the script exits; make-debian-package.sh holds it already and says so.
if [ -z "${INGEST_PERF_RELEASE_LOCKED:-}" ]; then
  mkdir -p "$build"
  exec 9>"$build/.lock"
  flock 9
fi

# Debian's hardening for what ships (lintian checks it): fortified libc calls, a read-only GOT
# resolved at load.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINGEST_PERF_BUILD_TESTS=OFF \
  -DCMAKE_CXX_FLAGS="-D_FORTIFY_SOURCE=2" -DCMAKE_C_FLAGS="-D_FORTIFY_SOURCE=2" \
  -DCMAKE_SHARED_LINKER_FLAGS="-Wl,-z,relro -Wl,-z,now" >/dev/null
ninja -C "$build" OrthancIngestPerf >/dev/null
library="$build/libOrthancIngestPerf.so"

# The properties the archive promises, checked on the very file that ships.
exported="$(nm -D --defined-only "$library" | awk '{print $3}' | sort | tr '\n' ' ')"
expected="OrthancPluginFinalize OrthancPluginGetName OrthancPluginGetVersion OrthancPluginInitialize "
[ "$exported" = "$expected" ] || { echo "unexpected exported symbols: $exported" >&2; exit 1; }
if objdump -p "$library" | awk '/NEEDED/ {print $2}' | grep -vE '^(libstdc\+\+\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libc\.so\.6|ld-linux-x86-64\.so\.2)$'; then
  echo "the plugin needs a library beyond the C and C++ runtime (above)" >&2
  exit 1
fi
glibc="$(objdump -T "$library" | grep -o 'GLIBC_[0-9.]*' | sort -V | tail -1)"
glibcxx="$(objdump -T "$library" | grep -o 'GLIBCXX_[0-9.]*' | sort -V | tail -1)"

version="$(sed -n 's/^project(OrthancIngestPerf VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
name="orthanc-ingest-perf-$version-linux-x86_64"
stage="$build/dist/$name"
rm -rf "$stage" "$build/dist/$name.tar.gz"
mkdir -p "$stage"
strip --strip-unneeded --remove-section=.comment -o "$stage/libOrthancIngestPerf.so" "$library"
chmod 0644 "$stage/libOrthancIngestPerf.so"
# The report: its launcher, its module (standard library only) and its man page.
install -m 0755 Resources/orthanc-ingest-perf-report "$stage/"
install -m 0644 Resources/orthanc-ingest-perf-report.1 "$stage/"
install -d "$stage/python/ingest_perf"
install -m 0644 ingest_perf/__init__.py ingest_perf/perf_report.py "$stage/python/ingest_perf/"
install -m 0644 Resources/report-main.py "$stage/python/__main__.py"
# Monitoring, the sample configuration, the licence and the reference.
install -m 0644 Resources/grafana-dashboard.json Resources/prometheus-alerts.yml Resources/prometheus-alerts.test.yml \
  Resources/debian/ingest-perf.json LICENSE NOTICE README.md NEWS "$stage/"
(cd docs && find . -type f | sort | while read -r file; do install -D -m 0644 "$file" "$stage/docs/$file"; done)
commit="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
[ -z "$(git status --porcelain 2>/dev/null)" ] || commit="$commit+uncommitted"
cat >"$stage/BUILD-INFO" <<INFO
orthanc-ingest-perf $version
commit: $commit
built on: $(. /etc/os-release && echo "$PRETTY_NAME"), $(g++ --version | sed -n 1p)
SDK header: orthanc-dev $(dpkg-query -W -f='${Version}' orthanc-dev 2>/dev/null || echo unknown)
jsoncpp: $(cat build-deps/jsoncpp/.complete 2>/dev/null || echo unknown), compiled in
page /perf/ui/: Resources/ui/ compiled in, with $(cd Resources/ui/vendor && ls uPlot-*.iife.min.js | sed 's/-\([0-9.]*\)\.iife\.min\.js$/ \1/') (MIT license, served at /perf/ui/vendor/)
needs: Orthanc >= 1.10.1, x86_64 Linux with $glibc and $glibcxx (Debian 12, Ubuntu 22.04, RHEL 9 or newer)
hardening: -D_FORTIFY_SOURCE=2, -z relro -z now
exports: $expected
INFO
cat >"$stage/INSTALL.txt" <<'INFO'
On Debian or Ubuntu, prefer the Debian package (orthanc-ingest-perf_<version>_amd64.deb, made by
Resources/make-debian-package.sh): apt-get install ./orthanc-ingest-perf_<version>_amd64.deb
installs all of this where Debian's Orthanc expects it (docs/loading.md).

By hand, on a Debian or Ubuntu Orthanc (the `orthanc` package), as root:

  sha256sum -c SHA256SUMS
  install -m 0644 libOrthancIngestPerf.so /usr/share/orthanc/plugins/
  systemctl restart orthanc
  curl -s -u USER:PASSWORD http://localhost:8042/plugins/ingest-perf

Debian's Orthanc loads every library in /usr/share/orthanc/plugins (its /etc/orthanc/orthanc.json
lists that folder in "Plugins"): do not also add the file to "Plugins". Another Orthanc: add the
file's full path to its "Plugins" list instead. Options go in an "IngestPerf" section, defined once:
ingest-perf.json here is a start (install -m 0644 ingest-perf.json /etc/orthanc/).
Remove: delete the file and restart Orthanc.

Also here:
  orthanc-ingest-perf-report  the report, from any host with python3 (./orthanc-ingest-perf-report
                              --url orthanc:8042 --user USER; man ./orthanc-ingest-perf-report.1)
  grafana-dashboard.json      a Grafana dashboard over GET /perf/metrics (docs/prometheus.md)
  prometheus-alerts.yml       Prometheus alert rules, with their unit tests (promtool test rules
                              prometheus-alerts.test.yml)
  docs/                       the reference: loading.md, configuration.md, diagnosis.md, ...
  LICENSE, NOTICE             AGPL-3.0-or-later; the notices of the code compiled in
INFO
(cd "$stage" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
tar -C "$build/dist" --sort=name --owner=0 --group=0 --numeric-owner -czf "$build/dist/$name.tar.gz" "$name"
(cd "$build/dist" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "$build/dist/$name.tar.gz"
cat "$build/dist/$name.tar.gz.sha256"
