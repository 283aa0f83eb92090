# The Debian roots that hold the Orthancs the tests run besides the host's (sourced by
# Resources/make-debian-root.sh and Resources/debian-orthanc.sh; ingest_perf/orthanc_process.py,
# debian_root(), knows the same folders and variables).
#   debian_root RELEASE   sets debian_name and debian_root (the root's folder: the release's
#                         variable, or its folder in <repo>/build-roots); returns 1 for a release it does not know
# Expects $repo (the repository's folder).
debian_root() {
  case "$1" in
  trixie)
    debian_name="Debian 13 (trixie)"
    debian_root="${INGEST_PERF_DEBIAN13_ROOT:-$repo/build-roots/debian13}"
    ;;
  sid)
    debian_name="Debian unstable (sid)"
    debian_root="${INGEST_PERF_DEBIAN_SID_ROOT:-$repo/build-roots/debian-sid}"
    ;;
  *)
    return 1
    ;;
  esac
}
