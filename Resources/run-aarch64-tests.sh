#!/usr/bin/env bash
# The unit tests on aarch64, where Debian ships Orthanc too and memory is weakly ordered: builds
# GoogleTest (Debian's source, /usr/src/googletest) and the unit tests with g++-aarch64-linux-gnu
# in build-aarch64/, checks that the spin lock's hint is an `isb` (Platform/BoundedSpinLock.h), and
# runs the tests under qemu-user. Five tests are left out: they read a socket's SO_COOKIE or
# TCP_INFO, which qemu-user 7.2 does not carry over (EINVAL; 4 bytes of TCP_INFO). qemu runs the
# code, not Arm's memory model: the orderings stay argued in the code (the seqlocks' fences).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
build=build-aarch64
jobs="${JOBS:-2}"
start=$SECONDS

cmake -S /usr/src/googletest -B "$build/googletest" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_GMOCK=OFF \
  -DCMAKE_TOOLCHAIN_FILE="$repo/Resources/aarch64-toolchain.cmake" -DCMAKE_INSTALL_PREFIX="$repo/$build/gtest" >/dev/null
ninja --quiet -C "$build/googletest" -j "$jobs"
ninja -C "$build/googletest" install >/dev/null
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINGEST_PERF_WERROR=ON \
  -DCMAKE_TOOLCHAIN_FILE="$repo/Resources/aarch64-toolchain.cmake" -DGTEST_INCLUDE_DIR="$repo/$build/gtest/include" \
  -DGTEST_LIBRARY="$repo/$build/gtest/lib/libgtest.a" -DGTEST_MAIN_LIBRARY="$repo/$build/gtest/lib/libgtest_main.a" >/dev/null
ninja --quiet -C "$build" -j "$jobs" UnitTests
echo "$build: built in $((SECONDS - start)) s"

spin='#include "Platform/BoundedSpinLock.h"
bool Spin(std::atomic<bool>& locked) { return IngestPerf::BoundedSpinLock(locked); }'
if ! aarch64-linux-gnu-g++ -std=c++17 -O2 -IPlugin -S -x c++ - -o "$build/spin.s" <<<"$spin" ||
   ! grep -qw isb "$build/spin.s"; then
  echo "BoundedSpinLock spins without an isb on aarch64 ($build/spin.s)" >&2
  exit 1
fi
echo "BoundedSpinLock's hint on aarch64: isb"

qemu_unsupported="ProcessSockets.FindsTheListenerAndTheConnectionsOfAPort"
qemu_unsupported+=":ProcessSockets.ANewConnectionOnTheSameDescriptorHasAnotherCookie"
qemu_unsupported+=":ProcessSockets.TellsWhenDataLastWentEachWay"
qemu_unsupported+=":HttpConnectionIdentityTest.AClientsAddressAndPortNameItsConnectionOnceThePluginsThreadFoundIt"
qemu_unsupported+=":HttpConnectionIdentityTest.ACandidateNotAmongOrthancsConnectionsIsTriedAgainThenRefused"
qemu-aarch64 -L /usr/aarch64-linux-gnu "$build/UnitTests" --gtest_brief=1 --gtest_filter="-$qemu_unsupported"
