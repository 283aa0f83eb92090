#!/usr/bin/env bash
# Orthanc's own integration suite (orthanc-tests) with and without the plugin, per test, in every
# mode of the plugin, on each Orthanc for which a checkout of the suite is present:
#
#   $ORTHANC_TESTS_DIR/Orthanc-1.10.1   the suite at tag Orthanc-1.10.1, run against Debian 12's Orthanc
#   $ORTHANC_TESTS_DIR/Orthanc-1.12.7   the suite at tag Orthanc-1.12.7, run against Debian 13's Orthanc
#                                       (Resources/debian13-orthanc.sh, root of make-debian13-root.sh)
#
# ORTHANC_TESTS_DIR defaults to build-deps/orthanc-tests. The project does not ship the suite; get it
# with, e.g. (docs/reliability.md):
#   git clone https://github.com/orthanc-server/orthanc-tests build-deps/orthanc-tests/src
#   git -C build-deps/orthanc-tests/src worktree add ../Orthanc-1.10.1 Orthanc-1.10.1
#   git -C build-deps/orthanc-tests/src worktree add ../Orthanc-1.12.7 Orthanc-1.12.7
# The interpreters the suite needs are made here, beside the checkouts: py2env (Python 2.7, which
# Debian 12 does not ship: python2.7 on PATH or in pyenv, else the 1.10.1 comparison is refused)
# and py3env. Arguments go to Resources/compare-orthanc-suite.py (e.g. --tests ingest, --modes ...).
# Without any checkout, says so and exits 0. The plugin is $INGEST_PERF_PLUGIN or build/'s.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${ORTHANC_TESTS_DIR:-$repo/build-deps/orthanc-tests}"
plugin="${INGEST_PERF_PLUGIN:-$repo/build/libOrthancIngestPerf.so}"
results="$repo/build/orthanc-suite"

present=()
for version in 1.10.1 1.12.7; do
  [ -f "$dir/Orthanc-$version/Tests/Run.py" ] && present+=("$version")
done
if [ "${#present[@]}" -eq 0 ]; then
  echo "skipped: no checkout of orthanc-tests in $dir (Orthanc-1.10.1/, Orthanc-1.12.7/); see docs/reliability.md"
  exit 0
fi

python27() {
  local candidate
  for candidate in "$(command -v python2.7 || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/2.7*/bin/python2.7; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (2, 7))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

# The interpreter for the suite of an Orthanc version, in the venv folder given: made once, then reused.
interpreter() {
  local env="$1" version="$2"
  if [ "$version" = 1.10.1 ]; then
    if ! "$env/bin/python" -c 'import httplib2, PIL, numpy' 2>/dev/null; then
      local py2
      py2="$(python27)" || { echo "no Python 2.7 (python2.7 on PATH or in pyenv): the 1.10.1 suite needs it" >&2; return 1; }
      rm -rf "$env" "$dir/.virtualenv-py2"
      "$py2" -m pip install -q --disable-pip-version-check --target "$dir/.virtualenv-py2" 'virtualenv<20.22' >&2
      PYTHONPATH="$dir/.virtualenv-py2" "$py2" -m virtualenv -q "$env" >&2
      "$env/bin/pip" install -q --disable-pip-version-check httplib2==0.22.0 Pillow==6.2.2 numpy==1.16.6 2>&1 |
        grep -v DEPRECATION >&2 || true
    fi
  else
    if ! "$env/bin/python" -c 'import httplib2, PIL, numpy, pydicom' 2>/dev/null; then
      rm -rf "$env"
      /usr/bin/python3 -m venv "$env"
      "$env/bin/pip" install -q --disable-pip-version-check httplib2==0.32.1 pillow==13.0.0 numpy==2.4.6 \
        pydicom==3.0.2 >&2
    fi
  fi
  echo "$env/bin/python"
}

status=0
for version in "${present[@]}"; do
  if [ "$version" = 1.10.1 ]; then
    env="$dir/py2env" orthanc=/usr/sbin/Orthanc
  else
    env="$dir/py3env" orthanc="$repo/Resources/debian13-orthanc.sh"
  fi
  echo "--- Orthanc $version: suite $dir/Orthanc-$version"
  python="$(interpreter "$env" "$version")" || { status=2; continue; }
  mkdir -p "$results"
  rm -rf "$results/$version"
  code=0
  "$repo/.venv/bin/python" "$repo/Resources/compare-orthanc-suite.py" --suite "$dir/Orthanc-$version" \
    --plugin "$plugin" --python "$python" --orthanc "$orthanc" --work-dir "$results/$version" "$@" || code=$?
  [ "$code" -gt "$status" ] && status=$code
done
exit "$status"
