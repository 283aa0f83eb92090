#!/usr/bin/env bash
# Orthanc's own integration suite (orthanc-tests) with and without the plugin, per test, in every
# mode of the plugin, on each Orthanc for which a checkout of the suite is present:
#
#   $ORTHANC_TESTS_DIR/Orthanc-1.10.1   the suite at tag Orthanc-1.10.1, run against Debian 12's Orthanc
#   $ORTHANC_TESTS_DIR/Orthanc-1.12.7   the suite at tag Orthanc-1.12.7, run against Debian 13's Orthanc
#                                       (Resources/debian13-orthanc.sh, root of make-debian-root.sh trixie)
#   $ORTHANC_TESTS_DIR/Orthanc-1.13.0   the suite at tag Orthanc-1.13.0, run against Debian unstable's Orthanc
#                                       (Resources/debian-sid-orthanc.sh, root of make-debian-root.sh sid)
#
# ORTHANC_TESTS_DIR defaults to build-deps/orthanc-tests. The project does not ship the suite; get it
# as docs/reliability.md says ("Getting the suite").
# The three suites are Python 2 code: one interpreter runs them, py2env beside the checkouts, made here
# on the first run (Python 2.7, which Debian 12 does not ship: python2.7 on PATH or in pyenv, else
# the comparison is refused) with httplib2, Pillow, numpy and pydicom 1.4.1 (the last for Python 2).
# Every run keeps its results in build/orthanc-suite/<version>/<start time>/ (a run removes no
# earlier one); the end prints the latest result of each version and mode kept there.
# Arguments go to ingest_perf/compare_orthanc_suite.py (e.g. --tests ingest, --modes ...); --help
# shows its options and the modes. Without any checkout, says so and exits 0. The plugin is
# $INGEST_PERF_PLUGIN or build/'s. ORTHANC_VERSIONS="1.12.7" runs only that version's suite.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${ORTHANC_TESTS_DIR:-$repo/build-deps/orthanc-tests}"
plugin="${INGEST_PERF_PLUGIN:-$repo/build/libOrthancIngestPerf.so}"
results="$repo/build/orthanc-suite"
compare=("$repo/.venv/bin/python" -m ingest_perf.compare_orthanc_suite)
for argument in "$@"; do
  case "$argument" in
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
      echo
      exec "${compare[@]}" --help
      ;;
  esac
done

present=()
for version in ${ORTHANC_VERSIONS:-1.10.1 1.12.7 1.13.0}; do
  [ -f "$dir/Orthanc-$version/Tests/Run.py" ] && present+=("$version")
done
if [ "${#present[@]}" -eq 0 ]; then
  echo "skipped: no checkout of orthanc-tests in $dir (Orthanc-1.10.1/, Orthanc-1.12.7/, Orthanc-1.13.0/); see docs/reliability.md"
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

# The interpreter of both suites, in the venv folder given: made once, then reused.
interpreter() {
  local env="$1"
  if ! "$env/bin/python" -c 'import httplib2, PIL, numpy, pydicom' 2>/dev/null; then
    local py2
    py2="$(python27)" || { echo "no Python 2.7 (python2.7 on PATH or in pyenv): the suite needs it" >&2; return 1; }
    rm -rf "$env" "$dir/.virtualenv-py2"
    "$py2" -m pip install -q --disable-pip-version-check --target "$dir/.virtualenv-py2" 'virtualenv<20.22' >&2
    PYTHONPATH="$dir/.virtualenv-py2" "$py2" -m virtualenv -q "$env" >&2
    "$env/bin/pip" install -q --disable-pip-version-check httplib2==0.22.0 Pillow==6.2.2 numpy==1.16.6 \
      pydicom==1.4.1 2>&1 | grep -v DEPRECATION >&2 || true
  fi
  echo "$env/bin/python"
}

status=0
python="$(interpreter "$dir/py2env")" || exit 2
for version in "${present[@]}"; do
  echo "--- Orthanc $version: suite $dir/Orthanc-$version"
  code=0
  "${compare[@]}" --suite "$dir/Orthanc-$version" --plugin "$plugin" --python "$python" --orthanc "$version" \
    --results "$results" "$@" || code=$?
  [ "$code" -gt "$status" ] && status=$code
done
echo "--- latest result of each version, test selection and mode kept in $results:"
"${compare[@]}" --summary "$results"
exit "$status"
