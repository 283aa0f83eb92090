#!/usr/bin/env bash
# The Orthanc of a Debian root of Resources/make-debian-root.sh (trixie: Debian 13's 1.12.7; sid:
# Debian unstable's 1.13.0), run as if it were installed here: the release first, then the same
# arguments as Orthanc, same working directory, and the host's /tmp, this
# repository and the folders listed in $INGEST_PERF_BIND (colon-separated) visible at the same paths, so
# that configuration files, storage folders and plugins given as host paths work unchanged. It
# shares the host's network, so clients on the host reach it on loopback. $INGEST_PERF_ORTHANC_PRELOAD
# becomes Orthanc's LD_PRELOAD (paths as seen in the root), and only Orthanc's. $INGEST_PERF_ORTHANC_WRAPPER
# (words separated by spaces, paths as seen in the root) is put before Orthanc's command inside the root,
# e.g. a copy of valgrind (ingest_perf/benchmarks/instruction_count.py).
#   Resources/debian-orthanc.sh trixie|sid ORTHANC-ARGUMENTS...
# Resources/debian13-orthanc.sh and Resources/debian-sid-orthanc.sh name the release themselves: one
# file that is Orthanc, for the integration tests (ingest_perf/orthanc_process.py, executable()) and
# so for the comparison with Orthanc's own suite, which take the command as one path.
#
# A private mount namespace holds the mounts: they disappear with the process. Every step execs
# the next, so this process becomes Orthanc itself (pid, signals, exit code).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
release="${1:-}"
# shellcheck source=Resources/debian-roots.sh
. "$repo/Resources/debian-roots.sh"
debian_root "$release" || { echo "usage: $0 trixie|sid ORTHANC-ARGUMENTS..." >&2; exit 2; }
shift
root="$debian_root"
if [ ! -f "$root/.ingest-perf-complete" ]; then
  echo "no $debian_name root in $root: run $repo/Resources/make-debian-root.sh $release" >&2
  exit 2
fi
binds="/tmp:$repo:$PWD${INGEST_PERF_BIND:+:$INGEST_PERF_BIND}"
exec unshare --mount --propagation private env ROOT="$root" BINDS="$binds" WORKDIR="$PWD" \
  PRELOAD="${INGEST_PERF_ORTHANC_PRELOAD:-}" WRAPPER="${INGEST_PERF_ORTHANC_WRAPPER:-}" bash -ec '
  mount -t proc proc "$ROOT/proc"
  mount --rbind /dev "$ROOT/dev"
  IFS=: read -ra folders <<<"$BINDS"
  for folder in "${folders[@]}"; do
    if [ -n "$folder" ] && [ -d "$folder" ]; then
      mkdir -p "$ROOT$folder"
      mount --rbind "$folder" "$ROOT$folder"
    fi
  done
  read -ra wrapper <<<"$WRAPPER"
  if [ -n "$PRELOAD" ]; then
    exec chroot "$ROOT" /usr/bin/env --chdir="$WORKDIR" LD_PRELOAD="$PRELOAD" "${wrapper[@]}" /usr/sbin/Orthanc "$@"
  fi
  exec chroot "$ROOT" /usr/bin/env --chdir="$WORKDIR" "${wrapper[@]}" /usr/sbin/Orthanc "$@"' orthanc "$@"
