#!/usr/bin/env bash
# The Debian roots the package test installs orthanc-ingest-perf into (IntegrationTests/
# test_debian_package.py), each with Debian's Orthanc and python3 (the report's interpreter), made
# once and cached, like Resources/make-debian-root.sh's:
#   build-roots-pkg/debian12   debootstrap of Debian 12 ("bookworm"): Orthanc 1.10.1
#   build-roots-pkg/debian13   a copy of build-roots/debian13 (made first if missing): Orthanc 1.12.7
# No service starts in them (policy-rc.d), apt's package lists are dropped (55 MB each): the test
# installs the package offline, its dependencies already there. The test works on copies of them.
#   Resources/make-package-roots.sh [FOLDER]   default: $INGEST_PERF_PACKAGE_ROOTS or <repo>/build-roots-pkg
# A root is complete once ROOT/.ingest-perf-complete names what it holds; any other is made again.
# apt's and debootstrap's output go to ROOT.log beside the root; its end is printed on failure.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
[ "$(id -u)" -eq 0 ] || exec sudo -E "$0" "$@"
folder="$(realpath -m "${1:-${INGEST_PERF_PACKAGE_ROOTS:-$repo/build-roots-pkg}}")"
mirror="${INGEST_PERF_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
packages="orthanc python3"
mkdir -p "$folder"
exec 9>"$folder/.lock"
flock 9  # two runs at once: the second waits, then finds the roots complete

in_root() {  # ROOT COMMAND...: in the root, /proc mounted in a private mount namespace
  local root="$1"
  shift
  unshare --mount --propagation private sh -ec 'mount -t proc proc "$0/proc"; exec chroot "$0" "$@"' "$root" \
    /usr/bin/env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# No service starts by itself in a root (the tests start Orthanc), and "localhost" resolves there.
configure() {
  local root="$1"
  printf '#!/bin/sh\n# make-package-roots.sh: the tests start Orthanc themselves\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 0755 "$root/usr/sbin/policy-rc.d"
  [ -s "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
}

make_root() {  # NAME SUITE BASE: BASE (a root to copy) or "" (debootstrap SUITE)
  local name="$1" suite="$2" base="$3"
  local root="$folder/$name" log="$folder/$name.log" marker="$folder/$name/.ingest-perf-complete"
  local text="$suite:${packages// /,}"
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$text" ]; then
    echo "package root $name: $root is complete"
    return
  fi
  local start=$SECONDS
  : >"$log"
  trap 'code=$?; echo " FAILED (exit code $code); the end of $log:" >&2; tail -n 25 "$log" >&2; exit $code' ERR
  if [ -e "$root" ]; then
    if grep -qF " $root/" /proc/self/mountinfo || [ "$root" = "/" ]; then
      echo "refused: something is mounted in $root" >&2
      exit 1
    fi
    rm -rf "$root"
  fi
  if [ -n "$base" ]; then
    printf 'package root %s: a copy of %s, then %s ...' "$name" "$base" "$packages"
    cp -a "$base" "$root"
    rm -f "$root/.ingest-perf-complete"
    configure "$root"
    in_root "$root" apt-get update >>"$log" 2>&1
  else
    printf 'package root %s: debootstrap %s, then %s ...' "$name" "$suite" "$packages"
    command -v debootstrap >/dev/null || apt-get install -y --no-install-recommends debootstrap >>"$log" 2>&1
    debootstrap --variant=minbase "$suite" "$root" "$mirror" >>"$log" 2>&1
    configure "$root"
  fi
  # shellcheck disable=SC2086
  in_root "$root" apt-get install -y -q --no-install-recommends $packages >>"$log" 2>&1
  in_root "$root" apt-get clean >>"$log" 2>&1
  rm -rf "$root"/var/lib/apt/lists/*
  in_root "$root" /usr/sbin/Orthanc --version 2>>"$log" | sed -n 1p >>"$log"
  for process in /proc/[0-9]*; do  # a service that started in the root despite policy-rc.d
    if [ "$(readlink "$process/root" 2>/dev/null)" = "$root" ]; then
      echo "process ${process#/proc/} runs in the root" >>"$log"
      false
    fi
  done
  trap - ERR
  echo "$text" >"$marker"
  echo " done in $((SECONDS - start)) s, $(du -sh "$root" | cut -f1)"
}

make_root debian12 bookworm ""
"$repo/Resources/make-debian-root.sh" trixie >/dev/null
make_root debian13 trixie "$(realpath -m "${INGEST_PERF_DEBIAN13_ROOT:-$repo/build-roots/debian13}")"
