#!/usr/bin/env bash
# Debian unstable's Orthanc 1.13.0 in its root, as one file that is Orthanc: Resources/debian-orthanc.sh sid.
exec "$(dirname "$0")/debian-orthanc.sh" sid "$@"
