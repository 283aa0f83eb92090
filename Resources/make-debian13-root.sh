#!/usr/bin/env bash
# A Debian 13 ("trixie") root holding Orthanc 1.12.7 and the plugins the tests load beside ours
# (orthanc-gdcm, orthanc-dicomweb, orthanc-postgresql), made with debootstrap from Debian's archive
# and cached: about 40 s and 450 MB the first time, nothing afterwards. The integration tests run
# that Orthanc in the root (chroot, in a private mount namespace), clients and checks on the host.
#   Resources/make-debian13-root.sh [ROOT]      default: <repo>/build-roots/debian13
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
root="${1:-${INGEST_PERF_DEBIAN13_ROOT:-$repo/build-roots/debian13}}"
marker="$root/.ingest-perf-complete"
packages="orthanc,orthanc-gdcm,orthanc-dicomweb,orthanc-postgresql"
[ -f "$marker" ] && [ "$(cat "$marker")" = "$packages" ] && exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! command -v debootstrap >/dev/null; then
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

start=$SECONDS
log="$(dirname "$root")/debian13-debootstrap.log"
mkdir -p "$(dirname "$root")"
$SUDO rm -rf "$root"  # an interrupted run starts over
echo "Debian 13 root with Orthanc 1.12.7 in $root (log: $log)"
if ! $SUDO debootstrap --variant=minbase --include="$packages" trixie "$root" http://deb.debian.org/debian \
  >"$log" 2>&1; then
  echo "debootstrap failed; the end of $log:" >&2
  tail -20 "$log" >&2
  exit 1
fi
# No service of the root ever starts by itself (the tests start Orthanc by hand).
printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$root/usr/sbin/policy-rc.d" >/dev/null
$SUDO chmod 0755 "$root/usr/sbin/policy-rc.d"
echo "$packages" | $SUDO tee "$marker" >/dev/null
echo "done in $((SECONDS - start)) s: $(chroot "$root" /usr/sbin/Orthanc --version | head -1), $(du -sh "$root" | cut -f1)"
