#!/usr/bin/env bash
# Debian 12 ships jsoncpp as a shared library only, and a plugin that links libjsoncpp.so.25 does
# not load into an Orthanc of another distribution (Debian 13 has another soname). So the plugin
# compiles jsoncpp in, hidden: this unpacks Debian's own source package of it (the version Debian
# 12 builds its libjsoncpp from, with Debian's patches) into build-deps/jsoncpp. Idempotent.
# Uses a private apt source list and cache: the machine's apt configuration is not touched.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
destination="${1:-$repo/build-deps/jsoncpp}"
if [ -f "$destination/.complete" ]; then
  echo "jsoncpp source: $(cat "$destination/.complete") (Debian 12), present in $destination"
  exit 0
fi

work="$(dirname "$destination")/apt-source"
rm -rf "$work" "$destination"
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/unpack"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
  >"$work/sources.list"
options=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o Debug::NoLocking=1
  -o APT::Sandbox::User=root)
if ! apt-get "${options[@]}" update -qq >"$work/apt.log" 2>&1 ||
  ! (cd "$work/unpack" && apt-get "${options[@]}" source -qq libjsoncpp >>"$work/apt.log" 2>&1); then
  echo "cannot get Debian's jsoncpp source package; apt said:" >&2
  tail -20 "$work/apt.log" >&2
  exit 1
fi
unpacked="$(find "$work/unpack" -mindepth 1 -maxdepth 1 -type d -name 'libjsoncpp-*' -print -quit)"
[ -f "$unpacked/src/lib_json/json_value.cpp" ] || { echo "unexpected jsoncpp source layout in $unpacked" >&2; exit 1; }
mv "$unpacked" "$destination"
basename "$(ls "$work/unpack"/*.dsc)" .dsc >"$destination/.complete"
rm -rf "$work"
echo "jsoncpp source: $(cat "$destination/.complete") (Debian 12) in $destination"
