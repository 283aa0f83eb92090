"""Time windows (/perf/stats?window=...) and the `recent` block against a real Orthanc. A real run
cannot wait an hour: right after an ingest every window holds exactly what was sent since the start,
and after POST /perf/reset every window is empty. Rotation and window edges are unit-tested with an
injected clock (UnitTests/Metrics/TimeWindowsTests.cpp)."""
import pytest
from ingest_perf.orthanc_process import ALL_ORTHANCS

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0

WINDOWS = {"1m": 60, "5m": 300, "15m": 900, "1h": 3600}
SLOT = {"1m": 10, "5m": 10, "15m": 60, "1h": 60}


@pytest.fixture
def ingested(orthanc, series_factory):
    orthanc.storescu(series_factory(6, 31, size=64))
    orthanc.http_upload(series_factory(3, 32, size=64))
    return orthanc


def test_every_window_holds_what_was_sent(ingested):
    since_start = ingested.stats()
    for name, seconds in WINDOWS.items():
        answer = ingested.stats(window=name)
        window = answer["window"]
        assert window["name"] == name
        assert window["slotSeconds"] == SLOT[name]
        assert window["fullSlots"] * SLOT[name] == seconds
        # the plugin started less than a window ago: the window covers the time since then
        assert 0 < window["seconds"] <= answer["elapsedSeconds"] + 0.01
        assert window["droppedAtRotation"] == 0 and window["straddledRotation"] == 0
        assert "recent" not in answer
        for transport in ("dicom", "rest", "plugin", "job", "all"):
            windowed, total = answer["transports"][transport], since_start["transports"][transport]
            assert windowed["instances"] == total["instances"], (name, transport)
            assert windowed["bytesPerInstance"]["stored"]["sum"] == total["bytesPerInstance"]["stored"]["sum"]
            assert windowed["bytesPerInstance"]["stored"]["count"] == total["bytesPerInstance"]["stored"]["count"]
            for phase in ("serverTotal", "persist", "preStore"):
                assert windowed["phases"][phase]["count"] == total["phases"][phase]["count"], (name, phase)
            assert windowed["throughput"]["seconds"] == window["seconds"]
        dicom = answer["transports"]["dicom"]
        assert dicom["instances"]["stored"] == 6
        assert dicom["phases"]["associationGap"]["count"] == 5
        # over the time the instances arrived in, not the window's length (an idle window keeps its rate)
        active = dicom["throughput"]["activeSeconds"]
        assert 0 < active < window["seconds"]
        assert active == pytest.approx(since_start["transports"]["dicom"]["throughput"]["activeSeconds"], abs=0.001)
        assert dicom["throughput"]["instancesPerSecond"] == pytest.approx(6 / active, rel=0.01)
        assert answer["transports"]["rest"]["instances"]["stored"] == 3
        # a coarse histogram: within one bucket (1/8) of the since-start quantile
        server_total = dicom["phases"]["serverTotal"]
        assert server_total["p50"] == pytest.approx(since_start["transports"]["dicom"]["phases"]["serverTotal"]["p50"],
                                                    rel=0.13)
        assert server_total["sum"] == pytest.approx(since_start["transports"]["dicom"]["phases"]["serverTotal"]["sum"],
                                                    abs=0.001)


def test_recent_block(ingested):
    answer = ingested.stats()
    recent = answer["recent"]
    assert set(recent) == {"rest", "dicom", "plugin", "job", "all"}
    for transport, stored in (("dicom", 6), ("rest", 3), ("all", 9), ("job", 0)):
        for name in ("1m", "5m"):
            block = recent[transport][name]
            assert set(block) == {"seconds", "stored", "activeSeconds", "instancesPerSecond", "serverTotalMs"}
            assert block["stored"] == stored
            assert 0 < block["seconds"] <= answer["elapsedSeconds"] + 0.01
            assert 0 <= block["activeSeconds"] <= block["seconds"]
            assert block["instancesPerSecond"] == (
                pytest.approx(stored / block["activeSeconds"], rel=0.01) if stored else 0)
            p50, p99 = block["serverTotalMs"]["p50"], block["serverTotalMs"]["p99"]
            if stored:
                assert 0 < p50 <= p99
            else:
                assert p50 is None and p99 is None
    # one transport asked for: the recent block follows the answer's transports
    assert set(ingested.stats(transport="dicom")["recent"]) == {"dicom"}
    assert set(ingested.stats(transport="all")["recent"]) == {"all"}
    # a label view has no recent block (windows are per transport)
    assert "recent" not in ingested.stats(groupBy="remoteAet")


def test_reset_empties_the_windows(ingested, series_factory):
    assert ingested.reset_stats() == {"reset": True}
    for name in WINDOWS:
        answer = ingested.stats(window=name)
        assert answer["transports"]["all"]["instances"]["stored"] == 0
        assert answer["transports"]["all"]["phases"]["serverTotal"]["count"] == 0
        assert answer["window"]["seconds"] <= answer["elapsedSeconds"] + 0.01
    assert ingested.stats()["recent"]["all"]["5m"]["stored"] == 0
    ingested.storescu(series_factory(2, 33, size=64))
    assert ingested.stats(window="1m", transport="dicom")["transports"]["dicom"]["instances"]["stored"] == 2
    assert ingested.stats(window="1h")["transports"]["all"]["instances"]["stored"] == 2


@pytest.mark.parametrize("params, message", [
    ({"window": "2m"}, "invalid value '2m' for parameter 'window'"),
    ({"window": ""}, "invalid value '' for parameter 'window'"),
    ([("window", "1m"), ("window", "5m")], "parameter 'window' given twice"),
])
def test_bad_window_is_400(orthanc, params, message):
    answer = orthanc.get("/perf/stats", params=params)
    assert answer.status_code == 400
    assert answer.json()["error"] == message
    assert answer.json()["parameter"] == "window"


def test_a_windows_senders_are_exact_from_the_recent_instances(orthanc, series_factory):
    """window with groupBy or a label filter: the senders of the window, from the ring of recent
    instances (issue 34: per-sender figures of the last minutes, whatever the labels' churn)."""
    senders = ["WIN%02d" % i for i in range(6)]
    files = series_factory(12, 34, size=64)
    for i, aet in enumerate(senders):
        orthanc.storescu(files[2 * i:2 * i + 2], calling_aet=aet)
    orthanc.http_upload(series_factory(3, 35, size=64))
    answer = orthanc.stats(window="1m", groupBy="remoteAet")
    assert answer["query"]["window"] == "1m" and answer["window"]["name"] == "1m", answer["query"]
    recent = answer["recentInstances"]
    assert recent["complete"] and recent["matched"] == 15 and recent["skipped"] == 0, recent
    groups = {g["labels"]["remoteAet"]: g["instances"] for g in answer["groups"]}
    for aet in senders:
        assert groups[aet]["stored"] == 2 and groups[aet]["alreadyStored"] == 0, groups
        assert groups[aet]["failed"] is None, groups[aet]  # the ring keeps stored and duplicates only
    assert groups["(none)"]["stored"] == 3, groups  # the HTTP uploads have no calling AET
    assert answer["transports"]["dicom"]["instances"]["stored"] == 12

    one = orthanc.stats(window="5m", remoteAet="WIN03", transport="dicom")
    assert one["transports"]["dicom"]["instances"]["stored"] == 2, one["transports"]
    assert one["transports"]["dicom"]["phases"]["serverTotal"]["count"] == 2
    # The diagnosis reads a window per transport: a sender's window is refused there.
    refused = orthanc.get("/perf/diagnosis", params={"window": "5m", "remoteAet": "WIN03"})
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"] == "window=5m is diagnosed per transport only: it cannot be combined with label filters"

    orthanc.reset_stats()
    assert orthanc.stats(window="1m", groupBy="remoteAet")["groups"] == []


def test_perf_report_shows_a_window_and_the_recent_block(ingested, repo_root):
    import subprocess
    import sys
    script = [sys.executable, repo_root + "/Resources/perf_report.py", "--url", ingested.url, "--width", "200"]
    windowed = subprocess.run(script + ["--window", "5m", "--transport", "dicom"], capture_output=True, text=True)
    assert windowed.returncode == 0, windowed.stderr
    lines = windowed.stdout.splitlines()
    assert lines[0].startswith("Diagnosis (last 5m, ")  # the diagnosis of the same window comes first
    header = next(line for line in lines if line.startswith("ingest-perf "))
    assert "| last 5m (" in header and "since" not in header
    assert any(line.startswith("DICOM (C-STORE): 6 stored") for line in lines)
    default = subprocess.run(script, capture_output=True, text=True)
    assert default.returncode == 0, default.stderr
    assert any(line.strip().startswith("last 1m: 6 stored") and "; last 5m: 6 stored" in line
               for line in default.stdout.splitlines()), default.stdout
    refused = subprocess.run(script + ["--window", "2m"], capture_output=True, text=True)
    assert refused.returncode == 2 and "window" in refused.stderr
