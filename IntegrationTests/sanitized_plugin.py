"""The AddressSanitizer + UndefinedBehaviorSanitizer build of the plugin (build-asan, made by the test
command) loaded into a real Orthanc, for test_sanitizers.py and test_stop_under_load.py.

The sanitizer runtime is preloaded, then AsanEarlyInit, then the plugin itself; Orthanc runs with
"MallocArenaMax": 0 (ASan's mallopt refuses M_ARENA_MAX). ASan writes its reports to log_path."""
import os
import subprocess

import pytest

from ingest_perf.orthanc_process import HOST_ORTHANC, REPO_ROOT

ASAN_BUILD = os.environ.get("INGEST_PERF_ASAN_BUILD") or os.path.join(REPO_ROOT, "build-asan")


def sanitized_plugin():
    """(plugin, ASan runtime, AsanEarlyInit) paths; fails the test when the build is missing."""
    plugin = os.path.join(ASAN_BUILD, "libOrthancIngestPerf.so")
    early = os.path.join(ASAN_BUILD, "libAsanEarlyInit.so")
    for path in (plugin, early):
        if not os.path.isfile(path):
            pytest.fail("%s is missing: build it with cmake -DINGEST_PERF_SANITIZE=address,undefined (the test "
                        "command does)" % path, pytrace=False)
    needed = subprocess.run(["ldd", plugin], check=True, capture_output=True, text=True).stdout
    runtime = [line.split("=>")[1].split()[0] for line in needed.splitlines() if "libasan.so" in line]
    assert runtime, "the sanitized plugin does not link the ASan runtime:\n" + needed
    return plugin, runtime[0], early


def sanitized_orthanc_kwargs(reports, orthanc_version=HOST_ORTHANC, other_plugins=()):
    """OrthancProcess arguments that load the sanitized plugin (and `other_plugins` after it), the
    reports going to the folder `reports`."""
    plugin, runtime, early = sanitized_plugin()
    os.makedirs(reports, exist_ok=True)
    preload = "%s %s %s" % (runtime, early, plugin)  # the runtime's path is the same in both Debians
    env = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1:log_path=%s/asan" % reports,
           "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
    env["LD_PRELOAD" if orthanc_version == HOST_ORTHANC else "INGEST_PERF_ORTHANC_PRELOAD"] = preload
    return {"plugin_path": None, "env": env,
            "extra_config": {"MallocArenaMax": 0, "Plugins": [plugin] + list(other_plugins)}}
