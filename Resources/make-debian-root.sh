#!/usr/bin/env bash
# A Debian root holding Debian's Orthanc and the plugins the tests load beside ours
# (orthanc-gdcm, orthanc-dicomweb, orthanc-postgresql, orthanc-python) and the tools Orthanc's own suite makes it call
# (dcmtk, libgdcm-tools), made with debootstrap from Debian's archive and cached. Two releases:
#   trixie   Debian 13: Orthanc 1.12.7 (1.12.7+dfsg-1), root <repo>/build-roots/debian13 or
#            $INGEST_PERF_DEBIAN13_ROOT; a few minutes and 340 MB the first time, nothing afterwards.
#   sid      Debian unstable: Orthanc 1.13.0 (1.13.0+dfsg-1+b1 when this was written; unstable moves, so the
#            version it holds is printed at the end, kept in ROOT/.ingest-perf-orthanc-version and
#            checked by ingest_perf/orthanc_process.py), root <repo>/build-roots/debian-sid or
#            $INGEST_PERF_DEBIAN_SID_ROOT.
# The integration tests run that Orthanc in the root (Resources/debian-orthanc.sh: chroot in a private
# mount namespace), clients and checks on the host.
#   Resources/make-debian-root.sh trixie|sid [ROOT]
# Idempotent: a root is complete once ROOT/.ingest-perf-complete names the packages below; any other root (an
# interrupted run) is removed and made again. apt's and debootstrap's output go to
# ROOT/.make-debian-root.log; its end is printed on failure.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
[ "$(id -u)" -eq 0 ] || exec sudo -E "$0" "$@"

release="${1:-}"
# The release's name and default root, shared with Resources/debian-orthanc.sh.
# shellcheck source=Resources/debian-roots.sh
. "$repo/Resources/debian-roots.sh"
debian_root "$release" || { echo "usage: $0 trixie|sid [ROOT]" >&2; exit 2; }
root="${2:-$debian_root}"
mirror="${INGEST_PERF_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# libasan8 and libubsan1: the sanitizer runtimes, to run the sanitized plugin in that Orthanc.
# dcmtk and libgdcm-tools: the programs that Orthanc's own suite makes Orthanc call from Lua
# (test_lua_deadlock makes the Orthanc under test run gdcmconv and dcmodify).
packages="orthanc orthanc-gdcm orthanc-dicomweb orthanc-postgresql orthanc-python libasan8 libubsan1 dcmtk libgdcm-tools"
marker="$root/.ingest-perf-complete"
marker_text="${packages// /,}"  # a root made for another package list is made again
complete() { [ -f "$marker" ] && [ "$(cat "$marker")" = "$marker_text" ]; }
# Runs a command in the root with /proc mounted in a private mount namespace: nothing stays mounted.
in_root() {
  unshare --mount --propagation private sh -ec 'mount -t proc proc "$0/proc"; exec chroot "$0" "$@"' "$root" \
    /usr/bin/env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
# Written before the packages are installed, and checked again on every run (roots made by older
# versions of this script): no service of the root ever starts by itself (the tests start Orthanc),
# "localhost" resolves inside (debootstrap writes no /etc/hosts), and, once Orthanc is there, its
# version is in ROOT/.ingest-perf-orthanc-version (what the tests check their version name against).
configure() {
  if [ ! -x "$root/usr/sbin/policy-rc.d" ]; then
    printf '#!/bin/sh\n# make-debian-root.sh: the tests start Orthanc themselves\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 0755 "$root/usr/sbin/policy-rc.d"
  fi
  [ -s "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
  # Unstable's Release file says it is valid for a week only (Valid-Until); a mirror that lags behind,
  # or a machine whose clock runs ahead of it, makes apt refuse it. The signatures are still checked:
  # this only lets a later "apt-get update" in the root (to add a package) read an outdated index.
  # debootstrap itself does not look at Valid-Until, so the root is made without it.
  if [ "$release" = sid ] && [ -d "$root/etc/apt/apt.conf.d" ] && [ ! -f "$root/etc/apt/apt.conf.d/99ingest-perf-valid-until" ]; then
    printf '// make-debian-root.sh: unstable'"'"'s index may be older than its Valid-Until\nAcquire::Check-Valid-Until "false";\n' \
      >"$root/etc/apt/apt.conf.d/99ingest-perf-valid-until"
  fi
  if [ -x "$root/usr/sbin/Orthanc" ] && [ ! -s "$root/.ingest-perf-orthanc-version" ]; then
    # The first line of "Orthanc --version" is "/usr/sbin/Orthanc 1.12.7": the path it was called by,
    # then the version. sed reads all of the output: head would close the pipe early, and Orthanc
    # would die of SIGPIPE (141 under pipefail).
    in_root /usr/sbin/Orthanc --version | sed -n '1s/.* //p' >"$root/.ingest-perf-orthanc-version"
  fi
}

if complete; then
  configure
  echo "$debian_name root: $root is complete"
  exit 0
fi

mkdir -p "$(dirname "$root")"
root="$(realpath -m "$root")"
marker="$root/.ingest-perf-complete"
log="$root/.make-debian-root.log"
# Two runs at once (two test sessions): the second waits, then finds the root complete.
exec 9>"$(dirname "$root")/.$(basename "$root").lock"
flock 9
if complete; then
  configure
  echo "$debian_name root: $root is complete"
  exit 0
fi

start=$SECONDS
step_start=$SECONDS
step_name=""
begin() { step_name="$1"; step_start=$SECONDS; printf '%-64s' "$1..."; }
end() { printf ' %3d s\n' "$((SECONDS - step_start))"; step_name=""; }
failed() {
  local code=$?
  if [ -n "$step_name" ]; then
    printf ' FAILED (exit code %d)\n' "$code"
    if [ -f "$log" ]; then
      echo "--- last lines of $log:" >&2
      tail -n 25 "$log" >&2
    fi
  fi
}
trap failed EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "$debian_name root with its Orthanc in $root (log: $log)"

if [ -e "$root" ]; then
  begin "removing the incomplete root"
  if [ "$root" = "/" ] || grep -qF " $root/" /proc/self/mountinfo || grep -qF " $root " /proc/self/mountinfo; then
    step_name=""; echo " refused: $root is / or something is mounted in it" >&2
    exit 1
  fi
  if [ -n "$(ls -A "$root")" ] && [ ! -e "$log" ] && [ ! -e "$marker" ] && [ ! -e "$root/debootstrap" ] \
    && [ ! -e "$root/etc/debian_version" ]; then
    step_name=""; echo " refused: $root holds something else than a Debian root" >&2
    exit 1
  fi
  rm -rf "$root"
  end
fi
mkdir -p "$root"
: >"$log"

if ! command -v debootstrap >/dev/null; then
  begin "installing debootstrap on the host"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends debootstrap >>"$log" 2>&1 \
    || { apt-get update >>"$log" 2>&1 && apt-get install -y --no-install-recommends debootstrap >>"$log" 2>&1; }
  end
fi

begin "debootstrap --variant=minbase $release"
debootstrap --variant=minbase "$release" "$root" "$mirror" >>"$log" 2>&1
end

begin "policy-rc.d, /etc/hosts; dpkg skips docs, man, locales"
configure
printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
  'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/locale/*' >"$root/etc/dpkg/dpkg.cfg.d/ingest-perf-minimal"
end

begin "apt-get install ${packages// /, }"
# debootstrap left the release's package index in the root: no apt-get update needed.
# shellcheck disable=SC2086
in_root apt-get install -y -q --no-install-recommends $packages >>"$log" 2>&1
in_root apt-get clean >>"$log" 2>&1
rm -rf "$root"/var/lib/apt/lists/*  # 55 MB; to add a package later: chroot ROOT apt-get update first
end

begin "checking Orthanc, its plugins, no service running"
rm -f "$root/.ingest-perf-orthanc-version"
configure 2>>"$log"  # writes ROOT/.ingest-perf-orthanc-version, now that Orthanc is there
version="Orthanc $(cat "$root/.ingest-perf-orthanc-version")"
[ "$version" != "Orthanc " ] || { echo "no version from /usr/sbin/Orthanc --version" >>"$log"; exit 1; }
echo "$version" >>"$log"
for plugin in libOrthancGdcm.so libOrthancDicomWeb.so libOrthancPostgreSQLIndex.so libOrthancPostgreSQLStorage.so; do
  test -e "$root/usr/share/orthanc/plugins/$plugin" || { echo "missing /usr/share/orthanc/plugins/$plugin" >>"$log"; exit 1; }
done
for process in /proc/[0-9]*; do  # a service that started in the root despite policy-rc.d
  if [ "$(readlink "$process/root" 2>/dev/null)" = "$root" ]; then
    echo "process ${process#/proc/} runs in the root: $(tr '\0' ' ' <"$process/cmdline")" >>"$log"
    exit 1
  fi
done
end

echo "$marker_text" >"$marker"
echo "done in $((SECONDS - start)) s: $version, $(du -sh "$root" | cut -f1)"
