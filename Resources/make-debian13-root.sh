#!/usr/bin/env bash
# A Debian 13 ("trixie") root holding Orthanc 1.12.7 and the plugins the tests load beside ours
# (orthanc-gdcm, orthanc-dicomweb, orthanc-postgresql, orthanc-python) and the tools Orthanc's own suite makes it call
# (dcmtk, libgdcm-tools), made with debootstrap from Debian's archive
# and cached: a few minutes and 340 MB the first time, nothing afterwards. The integration tests run
# that Orthanc in the root (Resources/debian13-orthanc.sh: chroot in a private mount namespace),
# clients and checks on the host.
#   Resources/make-debian13-root.sh [ROOT]   default: $INGEST_PERF_DEBIAN13_ROOT or <repo>/build-roots/debian13
# Idempotent: a root is complete once ROOT/.ingest-perf-complete names the packages below; any other root (an
# interrupted run) is removed and made again. apt's and debootstrap's output go to
# ROOT/.make-debian13-root.log; its end is printed on failure.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
[ "$(id -u)" -eq 0 ] || exec sudo -E "$0" "$@"

root="${1:-${INGEST_PERF_DEBIAN13_ROOT:-$repo/build-roots/debian13}}"
mirror="${INGEST_PERF_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# libasan8 and libubsan1: the sanitizer runtimes, to run the sanitized plugin in that Orthanc.
# dcmtk and libgdcm-tools: the programs that Orthanc's own suite makes Orthanc call from Lua
# (test_lua_deadlock makes the Orthanc under test run gdcmconv and dcmodify).
packages="orthanc orthanc-gdcm orthanc-dicomweb orthanc-postgresql orthanc-python libasan8 libubsan1 dcmtk libgdcm-tools"
marker="$root/.ingest-perf-complete"
marker_text="${packages// /,}"  # a root made for another package list is made again
complete() { [ -f "$marker" ] && [ "$(cat "$marker")" = "$marker_text" ]; }
# Written before the packages are installed, and checked again on every run (roots made by older
# versions of this script): no service of the root ever starts by itself (the tests start Orthanc),
# and "localhost" resolves inside (debootstrap writes no /etc/hosts).
configure() {
  if [ ! -x "$root/usr/sbin/policy-rc.d" ]; then
    printf '#!/bin/sh\n# make-debian13-root.sh: the tests start Orthanc themselves\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 0755 "$root/usr/sbin/policy-rc.d"
  fi
  [ -s "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
}

if complete; then
  configure
  echo "Debian 13 root: $root is complete"
  exit 0
fi

mkdir -p "$(dirname "$root")"
root="$(realpath -m "$root")"
marker="$root/.ingest-perf-complete"
log="$root/.make-debian13-root.log"
# Two runs at once (two test sessions): the second waits, then finds the root complete.
exec 9>"$(dirname "$root")/.$(basename "$root").lock"
flock 9
if complete; then
  configure
  echo "Debian 13 root: $root is complete"
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
# Runs a command in the root with /proc mounted in a private mount namespace: nothing stays mounted.
in_root() {
  unshare --mount --propagation private sh -ec 'mount -t proc proc "$0/proc"; exec chroot "$0" "$@"' "$root" \
    /usr/bin/env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

echo "Debian 13 root with Orthanc 1.12.7 in $root (log: $log)"

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

begin "debootstrap --variant=minbase trixie"
debootstrap --variant=minbase trixie "$root" "$mirror" >>"$log" 2>&1
end

begin "policy-rc.d, /etc/hosts; dpkg skips docs, man, locales"
configure
printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
  'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/locale/*' >"$root/etc/dpkg/dpkg.cfg.d/ingest-perf-minimal"
end

begin "apt-get install ${packages// /, }"
# debootstrap left the trixie package index in the root: no apt-get update needed.
# shellcheck disable=SC2086
in_root apt-get install -y -q --no-install-recommends $packages >>"$log" 2>&1
in_root apt-get clean >>"$log" 2>&1
rm -rf "$root"/var/lib/apt/lists/*  # 55 MB; to add a package later: chroot ROOT apt-get update first
end

begin "checking Orthanc, its plugins, no service running"
# sed reads all of it: head would close the pipe early, Orthanc would die of SIGPIPE (141 under pipefail)
version="$(in_root /usr/sbin/Orthanc --version 2>>"$log" | sed -n 1p)"
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
