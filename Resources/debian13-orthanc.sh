#!/usr/bin/env bash
# Debian 13's Orthanc 1.12.7 in its root, as one file that is Orthanc: Resources/debian-orthanc.sh trixie.
exec "$(dirname "$0")/debian-orthanc.sh" trixie "$@"
