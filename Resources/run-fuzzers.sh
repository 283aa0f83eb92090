#!/usr/bin/env bash
# Runs every libFuzzer target of Fuzzing/ for SECONDS each (default 30), two at a time, from a
# fresh copy of its seed corpus in build-fuzz/corpus/ (the repository's Fuzzing/corpus/ is left
# as it is). Builds build-fuzz/ first with clang-14 (-DINGEST_PERF_BUILD_FUZZERS=ON). Prints one
# line per target: executions, corpus size, result; exits non-zero if any target crashed or broke
# a property, with the saved input's path and the end of its log.
#   Resources/run-fuzzers.sh [SECONDS] [--merge]
#   --merge: afterwards, add the inputs that reach new code to Fuzzing/corpus/ (to be committed).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"

seconds=30
merge=0
for argument in "$@"; do
  case "$argument" in
    --merge) merge=1 ;;
    ''|*[!0-9]*) echo "usage: $0 [SECONDS-PER-TARGET] [--merge]" >&2; exit 2 ;;
    *) seconds="$argument" ;;
  esac
done

build=build-fuzz
start=$SECONDS
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DINGEST_PERF_WERROR=ON -DINGEST_PERF_BUILD_FUZZERS=ON >/dev/null
ninja --quiet -C "$build" -j 2
echo "$build: built in $((SECONDS - start)) s"

mapfile -t targets < <(find Fuzzing -maxdepth 1 -name '*Fuzzer.cpp' -printf '%f\n' | sed 's/Fuzzer\.cpp$//' | sort)
rm -rf "${build:?}/corpus" "${build:?}/artifacts" "${build:?}/logs"
mkdir -p "$build/logs"

# run TARGET: fuzzes it for $seconds from its seeds; its log in build-fuzz/logs/TARGET.log, its
# exit code in TARGET.code.
run() {
  local target="$1" code=0
  mkdir -p "$build/corpus/$target" "$build/artifacts/$target"
  cp -r "Fuzzing/corpus/$target/." "$build/corpus/$target/"
  # -timeout: an input taking 10 s is a hang. -rss_limit_mb: libFuzzer's default, made explicit (peaks
  # were 510-620 MB in 300 s runs).
  "./$build/${target}Fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$target/" "$build/corpus/$target" >"$build/logs/$target.log" 2>&1 || code=$?
  echo "$code" >"$build/logs/$target.code"
}

# Two at a time: the machine has two cores.
fuzz_start=$SECONDS
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do
    wait -n || true
  done
  run "$target" &
done
wait

failed=0
for target in "${targets[@]}"; do
  code="$(cat "$build/logs/$target.code" 2>/dev/null || echo "no exit code")"
  log="$build/logs/$target.log"
  executions="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
  seeds="$(find "Fuzzing/corpus/$target" -type f | wc -l)"
  corpus="$(find "$build/corpus/$target" -type f | wc -l)"
  if [ "$code" = 0 ]; then
    result="ok"
  else
    failed=1
    artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
    result="FAILED (exit code $code): input ${artifact:-not saved}, log $log"
  fi
  printf '%-16s %10s executions (%s/s), corpus %4s inputs (%s seeds): %s\n' \
    "$target" "${executions:-?}" "${rate:-?}" "$corpus" "$seeds" "$result"
  if [ "$code" != 0 ]; then
    grep -E 'property failed|ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error|SUMMARY' "$log" | head -n 5 |
      sed 's/^/    /'
  fi
done
echo "fuzzing: ${#targets[@]} targets, ${seconds} s each, two at a time, in $((SECONDS - fuzz_start)) s"

if [ "$merge" -eq 1 ]; then
  for target in "${targets[@]}"; do
    before="$(find "Fuzzing/corpus/$target" -type f | wc -l)"
    "./$build/${target}Fuzzer" -merge=1 "Fuzzing/corpus/$target" "$build/corpus/$target" \
      >"$build/logs/$target.merge.log" 2>&1
    echo "$target: Fuzzing/corpus/$target from $before to $(find "Fuzzing/corpus/$target" -type f | wc -l) inputs"
  done
fi

if [ "$failed" -ne 0 ]; then
  echo "fuzzing: FAILED; reproduce with ./$build/<Target>Fuzzer <input>, then add a unit test" >&2
  exit 1
fi
