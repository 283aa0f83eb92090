"""The AddressSanitizer + UndefinedBehaviorSanitizer build of the plugin (build-asan, made by the
test command), loaded into a real, uninstrumented Orthanc (1.10.1 and 1.12.7) under 16 concurrent
clients: no sanitizer report, no leak, and the counts exact.

The sanitizer runtime is preloaded (on 1.12.7, Debian 13's own, installed in its root), then
AsanEarlyInit (see its source: without it Orthanc 1.10.1 hangs at start-up; harmless on 1.12.7),
then the plugin itself, so that it stays loaded until LeakSanitizer looks at exit. Orthanc runs
with "MallocArenaMax": 0: ASan's mallopt refuses M_ARENA_MAX, and Orthanc stops when it fails.
ASan writes its reports to log_path; GCC's UBSan writes them to Orthanc's stderr, which is its log.
"""
import glob
import os

import pytest

from ingest_perf.clients import ClientError, Concurrently
from ingest_perf.orthanc_process import ALL_ORTHANCS, debian_plugin
from ingest_comparison import StatsPoller
from sanitized_plugin import sanitized_orthanc_kwargs, sanitized_plugin

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0

CLIENTS = {"storescu": 8, "http": 4, "stow": 4}
INSTANCES_PER_CLIENT = 6


@pytest.fixture(scope="module")
def sanitized():
    return sanitized_plugin()


def test_sixteen_concurrent_clients_with_the_sanitized_plugin(orthanc_factory, sanitized, series_factory, tmp_path,
                                                             orthanc_version):
    plugin = sanitized[0]
    reports = str(tmp_path / "reports")
    orthanc = orthanc_factory(**sanitized_orthanc_kwargs(
        reports, orthanc_version, [debian_plugin("libOrthancDicomWeb.so", orthanc_version)]))
    maps = open("/proc/%d/maps" % orthanc.pid).read()
    assert "libasan.so" in maps and plugin in maps  # the sanitizer really runs inside this Orthanc

    work = []  # (kind, client index, files): every client has its own series
    seed = 500
    for kind, count in CLIENTS.items():
        for index in range(count):
            seed += 1
            work.append((kind, index, series_factory(INSTANCES_PER_CLIENT, seed, size=128)))

    def client(kind, index, files):
        if kind == "storescu":
            orthanc.storescu(files, calling_aet="SAN%02d" % index)
        elif kind == "http":
            orthanc.http_upload(files)
        else:
            for part in (files[:3], files[3:]):
                answer = orthanc.stow_rs(part)
                assert answer.status_code == 200, answer.text[:300]

    # /perf/stats read concurrently, in every shape; the recent ring and the diagnosis too
    shapes = StatsPoller.SHAPES[:4] + [("/perf/slowest", {"n": 50}), ("/perf/trace", {}), ("/perf/diagnosis", {}),
                                       ("/perf/slowest", {"transport": "dicom", "phase": "associationGap"}),
                                       ("/perf/diagnosis", {"window": "1m", "transport": "dicom"})]
    errors = []
    with StatsPoller(orthanc, shapes, period=0) as poller:
        try:
            Concurrently([lambda item=item: client(*item) for item in work]).run()
        except ClientError as error:  # reported below, after the sanitizer's reports that would explain it
            errors.append(error)

    def reports_found():
        found = [open(f).read()[:3000] for f in glob.glob(os.path.join(reports, "*"))]
        log = orthanc.log_text()
        for marker in ("runtime error:", "Sanitizer"):  # UBSan's reports go to stderr
            if marker in log:
                found.append(log[max(0, log.index(marker) - 500):][:3000])
        return "sanitizer reports:\n" + "\n".join(found) if found else ""

    assert not reports_found(), reports_found()  # first: a report explains every other failure
    assert not errors, errors
    assert poller.reads and set(poller.statuses()) == {200}, poller.statuses()
    stats = orthanc.stats()
    expected = {"dicom": CLIENTS["storescu"], "rest": CLIENTS["http"], "plugin": CLIENTS["stow"]}
    for transport, clients in expected.items():
        assert stats["transports"][transport]["instances"]["stored"] == clients * INSTANCES_PER_CLIENT, transport
    assert orthanc.get("/statistics").json()["CountInstances"] == len(work) * INSTANCES_PER_CLIENT
    assert stats["errors"]["callbackExceptions"] == 0
    assert stats["openRecords"]["count"] == 0
    assert orthanc.stop() == 0
    assert not reports_found(), reports_found()
