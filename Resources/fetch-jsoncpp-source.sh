#!/usr/bin/env bash
# Debian 12 ships jsoncpp as a shared library only, and a plugin that links libjsoncpp.so.25 does
# not load into an Orthanc of another distribution (Debian 13 has another soname). So the plugin
# compiles jsoncpp in, hidden: this unpacks Debian's own source package of it (the version Debian
# 12 builds its libjsoncpp from, with Debian's patches) into build-deps/jsoncpp. Idempotent.
#
# The source comes from the machine's own apt sources (its mirror, keys and credentials: a build
# host behind a hospital's mirror works as it is). Most machines list only binary packages (`deb`),
# so the source entries (`deb-src`) are derived from them into a private copy of the configuration,
# with private lists and cache: the machine's apt configuration and state are not touched.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
destination="${1:-$repo/build-deps/jsoncpp}"
if [ -f "$destination/.complete" ]; then
  echo "jsoncpp source: $(cat "$destination/.complete") (Debian 12), present in $destination"
  exit 0
fi

work="$(dirname "$destination")/apt-source"
rm -rf "$work" "$destination"
mkdir -p "$work/sources.list.d" "$work/lists/partial" "$work/cache/archives/partial" "$work/unpack"

# The machine's sources, as apt reads them (Dir::Etc::SourceList and SourceParts), each `deb` entry
# also as `deb-src`: a one-line entry gets a deb-src twin, a deb822 stanza gets deb-src in its Types.
eval "$(apt-config shell list Dir::Etc::SourceList/f parts Dir::Etc::SourceParts/d)"
derive_one_line() { sed -n -E 's/^[[:space:]]*deb[[:space:]]/&/p; s/^[[:space:]]*deb([[:space:]])/deb-src\1/p' "$1"; }
[ -f "$list" ] && derive_one_line "$list" >"$work/sources.list"
touch "$work/sources.list"
for file in "$parts"/*.list "$parts"/*.sources; do
  [ -f "$file" ] || continue
  case "$file" in
    *.list) derive_one_line "$file" >"$work/sources.list.d/$(basename "$file")" ;;
    *.sources) sed -E '/^Types:/I{/deb-src/!s/$/ deb-src/}' "$file" >"$work/sources.list.d/$(basename "$file")" ;;
  esac
done
options=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/sources.list.d"
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o Debug::NoLocking=1
  -o APT::Sandbox::User=root)
# A source without source packages (a third-party repository) fails its part of the update, not
# the others: what matters is whether Debian's jsoncpp source is found afterwards.
apt-get "${options[@]}" update -qq >"$work/apt.log" 2>&1 || true
if ! (cd "$work/unpack" && apt-get "${options[@]}" source -qq libjsoncpp >>"$work/apt.log" 2>&1); then
  echo "cannot get Debian's jsoncpp source package from the machine's apt sources ($list, $parts);" \
    "the derived configuration is in $work; apt said:" >&2
  tail -20 "$work/apt.log" >&2
  exit 1
fi
unpacked="$(find "$work/unpack" -mindepth 1 -maxdepth 1 -type d -name 'libjsoncpp-*' -print -quit)"
[ -f "$unpacked/src/lib_json/json_value.cpp" ] || { echo "unexpected jsoncpp source layout in $unpacked" >&2; exit 1; }
mv "$unpacked" "$destination"
basename "$(ls "$work/unpack"/*.dsc)" .dsc >"$destination/.complete"
rm -rf "$work"
echo "jsoncpp source: $(cat "$destination/.complete") (Debian 12) in $destination"
