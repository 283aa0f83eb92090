"""The foundation, end to end: a real Orthanc with the plugin, ingest through storescu and HTTP."""
import io
import os
import threading
import zipfile

import pytest
import requests

from ingest_perf.clients import Concurrently, split
from ingest_perf.orthanc_process import ALL_ORTHANCS
from ingest_perf.stats_checks import (changes_paired, check_phase_invariants, check_phases_within_total, stored,
                                      wait_for)

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0


def file_sizes(paths):
    return [os.path.getsize(p) for p in paths]


def test_storescu_and_http_counts_and_phases(orthanc, series, series_factory):
    http_series = series_factory(12, 2)
    orthanc.storescu(series)
    orthanc.http_upload(http_series)
    n = len(series)

    stats = wait_for(orthanc, lambda s: changes_paired(s, "dicom") == n and changes_paired(s, "rest") == n)
    transports = stats["transports"]
    assert stored(stats, "dicom") == n
    assert stored(stats, "rest") == n
    assert stored(stats, "plugin") == 0
    assert stored(stats, "all") == 2 * n
    assert len(orthanc.get("/instances").json()) == 2 * n  # Orthanc agrees
    for name in ("dicom", "rest"):
        instances = transports[name]["instances"]
        assert all(instances[k] == 0 for k in instances if k not in ("stored", "failureReasons")), instances
        assert not any(instances["failureReasons"].values()), instances
        check_phase_invariants(transports[name], name)
        check_phases_within_total(transports[name], name)
        phases = transports[name]["phases"]
        assert phases["serverTotal"]["count"] == n
        assert phases["preStore"]["count"] == n
        assert phases["persist"]["count"] == n
        assert phases["persist"]["min"] > 0
        assert changes_paired(stats, name) == n  # every NewInstance matched its instance
        assert transports[name]["throughput"]["instancesPerSecond"] > 0
        stored_sizes = transports[name]["bytesPerInstance"]["stored"]
        sent = file_sizes(series if name == "dicom" else http_series)
        if name == "rest":  # HTTP stores the bytes sent
            assert (stored_sizes["min"], stored_sizes["max"]) == (min(sent), max(sent))
            assert stored_sizes["sum"] == sum(sent)
        else:  # storescu rewrites the meta header (its own implementation UID): a few bytes differ
            assert abs(stored_sizes["sum"] - sum(sent)) < 0.001 * sum(sent)

    # HTTP: the receive phase is measured and the three phases are exactly the total.
    rest = transports["rest"]["phases"]
    assert rest["receive"]["count"] == n
    assert abs(rest["receive"]["sum"] + rest["preStore"]["sum"] + rest["persist"]["sum"]
               - rest["serverTotal"]["sum"]) < 0.001
    # C-STORE: receive is unobservable, with the reason; the gap between instances is reported.
    dicom = transports["dicom"]["phases"]
    assert dicom["receive"]["observable"] is False
    assert "associationGap" in dicom["receive"]["reason"]
    assert dicom["associationGap"]["count"] == n - 1  # one association: every instance but the first
    assert dicom["associationGap"]["min"] > 0
    assert transports["rest"]["phases"]["associationGap"]["observable"] is False
    assert stats["openRecords"]["count"] == 0
    assert stats["errors"]["callbackExceptions"] == 0


def test_stored_files_are_byte_identical(orthanc, series):
    """The plugin observes only: what Orthanc stores is exactly what was sent over HTTP."""
    answers = orthanc.http_upload(series[:4])
    assert all(a["Status"] == "Success" for a in answers)
    sent = sorted(open(path, "rb").read() for path in series[:4])
    stored_files = sorted(orthanc.get("/instances/%s/file" % i).content for i in orthanc.get("/instances").json())
    assert stored_files == sent


def test_outcomes_of_records_that_never_reach_on_stored(orthanc, series, series_factory):
    n = len(series)
    session = requests.Session()  # one keep-alive connection: one Orthanc thread
    orthanc.http_upload(series, session=session)
    # Duplicates are judged by ReceptionDate, and inside the same second by the NewInstance
    # change of the earlier store: wait until those are delivered.
    wait_for(orthanc, lambda s: changes_paired(s, "rest") == n)

    again = session.post(orthanc.url + "/instances", data=open(series[0], "rb").read())
    assert again.json()["Status"] == "AlreadyStored"
    orthanc.storescu(series[1:3])  # duplicates through C-STORE

    not_dicom = session.post(orthanc.url + "/instances", data=b"this is not DICOM at all")
    assert not_dicom.status_code == 400
    empty = session.post(orthanc.url + "/instances", data=b"")
    assert empty.status_code == 400
    # Has the DICM header, cannot be parsed. Of an instance not stored: on Orthanc 1.13 a record that
    # ends before the filters is alreadyStored when its meta header names a stored instance
    # (docs/outcomes.md).
    truncated = open(series_factory(1, 77, size=64)[0], "rb").read()[:600]
    assert session.post(orthanc.url + "/instances", data=truncated).status_code == 400

    # Orthanc has no hook at the end of a request: the plugin concludes a failed one from its
    # thread's next work, or within seconds from Orthanc's count of requests in progress.
    stats = wait_for(orthanc, lambda s: s["transports"]["rest"]["instances"]["failed"] == 1 and
                     s["transports"]["rest"]["instances"]["alreadyStored"] == 1 and
                     s["transports"]["dicom"]["instances"]["alreadyStored"] == 2)
    rest = stats["transports"]["rest"]["instances"]
    assert rest["stored"] == n
    assert rest["alreadyStored"] == 1
    assert rest["notDicom"] == 1
    assert rest["requestWithoutInstance"] == 1
    assert rest["failed"] == 1
    assert rest["failureReasons"]["beforeFilters"] == 1  # Orthanc could not parse it
    assert rest["rejected"] == 0
    assert stats["openRecords"]["count"] == 0 and stats["openRecords"]["receiving"]["count"] == 0
    dicom = stats["transports"]["dicom"]["instances"]
    assert dicom["stored"] == 0
    assert dicom["alreadyStored"] == 2
    assert len(orthanc.get("/instances").json()) == n
    assert stats["transports"]["rest"]["phases"]["serverTotal"]["count"] == n  # duplicates not timed


def test_overwrite_instances_counts_a_resend_as_stored(orthanc_factory, series):
    orthanc = orthanc_factory(extra_config={"OverwriteInstances": True})
    orthanc.http_upload(series[:3])
    orthanc.http_upload(series[:1])
    stats = orthanc.stats(transport="rest")
    assert stored(stats, "rest") == 4
    assert stats["transports"]["rest"]["instances"]["alreadyStored"] == 0


def test_reset_zeroes_the_counts(orthanc, series):
    orthanc.http_upload(series[:3])
    assert stored(orthanc.stats(), "rest") == 3
    before = wait_for(orthanc, lambda s: s["changes"]["delivered"].get("NewInstance") == 3)
    assert before["changes"]["delivered"]["NewInstance"] == 3
    answer = orthanc.reset_stats()
    assert answer == {"reset": True}
    stats = orthanc.stats()
    assert stored(stats, "all") == 0
    assert stats["transports"]["rest"]["phases"]["serverTotal"]["count"] == 0
    assert stats["transports"]["rest"]["phases"]["serverTotal"]["mean"] is None
    assert stats["elapsedSeconds"] < 5
    # The changes delivered count from the reset too (those of the 3 instances came before it);
    # what is said since start is.
    assert "NewInstance" not in stats["changes"]["delivered"]
    assert stats["changes"]["newInstanceChangesSinceStart"] >= 3
    orthanc.storescu(series[3:5])
    assert stored(orthanc.stats(), "dicom") == 2
    after = wait_for(orthanc, lambda s: s["changes"]["delivered"].get("NewInstance") == 2)
    assert after["changes"]["delivered"]["NewInstance"] == 2


def test_zip_upload_chains_the_instances_of_one_request(orthanc, series):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for path in series[:3]:
            z.write(path, os.path.basename(path))
    answer = orthanc.post("/instances", data=archive.getvalue())
    assert answer.status_code == 200 and len(answer.json()) == 3
    rest = orthanc.stats(transport="rest")["transports"]["rest"]
    assert rest["instances"]["stored"] == 3
    phases = rest["phases"]
    assert phases["receive"]["count"] == 3  # first: request arrival; next ones: previous OnStored
    assert abs(phases["receive"]["sum"] + phases["preStore"]["sum"] + phases["persist"]["sum"]
               - phases["serverTotal"]["sum"]) < 0.001


def test_sixteen_concurrent_http_clients(orthanc, series_factory):
    files = series_factory(96, 3, size=64)
    Concurrently([lambda part=part: orthanc.http_upload(part) for part in split(files, 16)]).run()
    stats = wait_for(orthanc, lambda s: changes_paired(s, "rest") == len(files))
    rest = stats["transports"]["rest"]
    assert rest["instances"]["stored"] == len(files)
    assert rest["phases"]["serverTotal"]["count"] == len(files)
    assert changes_paired(stats, "rest") == len(files)
    check_phase_invariants(rest, "rest")
    check_phases_within_total(rest, "rest")
    assert stats["openRecords"]["count"] == 0
    assert stats["errors"]["callbackExceptions"] == 0


def test_parallel_associations_from_distinct_peers(orthanc, series_factory):
    files = series_factory(40, 4, size=64)
    Concurrently([lambda index=index: orthanc.storescu(files[index * 10:(index + 1) * 10], calling_aet="SCU%d" % index)
                  for index in range(4)]).run()
    dicom = orthanc.stats(transport="dicom")["transports"]["dicom"]
    assert dicom["instances"]["stored"] == 40, dicom["instances"]
    assert dicom["phases"]["associationGap"]["count"] == 36  # 4 associations of 10
    check_phase_invariants(dicom, "dicom")


def _racing(senders):
    """Runs the senders at the same moment, each on its own thread and connection."""
    barrier = threading.Barrier(len(senders))
    results = [None] * len(senders)

    def run(index):
        barrier.wait()
        results[index] = senders[index]()

    Concurrently([lambda index=index: run(index) for index in range(len(senders))]).run()
    return results


def _counted(stats, transport):
    instances = stats["transports"][transport]["instances"]
    return sum(instances[outcome] for outcome in ("stored", "alreadyStored", "failed"))


def test_a_duplicate_racing_its_original_is_counted_already_stored(orthanc, series_factory):
    """Each instance sent twice at the same moment, over two connections (HTTP) and two associations
    (C-STORE): Orthanc stores one copy and answers the other AlreadyStored, and so does the plugin,
    exactly; no NewInstance change is left waiting for an instance Orthanc never stored twice."""
    files = series_factory(20, 1, size=64)
    answers = _racing([lambda: orthanc.http_upload(files[:10]), lambda: orthanc.http_upload(files[:10])])
    statuses = [answer["Status"] for batch in answers for answer in batch]
    assert sorted(set(statuses)) <= ["AlreadyStored", "Success"], statuses
    _racing([lambda: orthanc.storescu(files[10:], calling_aet="RACE1"),
             lambda: orthanc.storescu(files[10:], calling_aet="RACE2")])
    # Orthanc 1.13 answers a duplicate before any filter: the plugin's thread counts it once its
    # record has ended (the connection's next request, the association's end), in a second or two.
    stats = wait_for(orthanc, lambda s: s["changes"]["newInstanceBacklog"] == 0 and
                     changes_paired(s, "rest") + changes_paired(s, "dicom") == 20 and
                     all(_counted(s, transport) == 20 for transport in ("rest", "dicom")))
    rest = stats["transports"]["rest"]["instances"]
    assert rest["stored"] == statuses.count("Success") == 10, (rest, statuses)
    assert rest["alreadyStored"] == statuses.count("AlreadyStored") == 10, rest
    dicom = stats["transports"]["dicom"]["instances"]
    assert (dicom["stored"], dicom["alreadyStored"]) == (10, 10), dicom
    assert stats["changes"]["newInstanceBacklog"] == 0, stats["changes"]
    assert len(orthanc.get("/instances").json()) == 20


def test_resend_after_delete_is_stored_again(orthanc, series):
    """The earlier copy's NewInstance change must not make the new copy look like a duplicate."""
    n = 6
    orthanc.http_upload(series[:n])
    wait_for(orthanc, lambda s: changes_paired(s, "rest") == n)
    assert orthanc.delete_all() == 1
    answers = orthanc.http_upload(series[:n])
    assert all(a["Status"] == "Success" for a in answers)
    rest = orthanc.stats(transport="rest")["transports"]["rest"]["instances"]
    assert rest["stored"] == 2 * n
    assert rest["alreadyStored"] == 0


DICOMWEB_PLUGIN = "/usr/share/orthanc/plugins/libOrthancDicomWeb.so"


def test_stow_rs_through_the_dicomweb_plugin_is_the_plugin_transport(orthanc_factory, plugin_path, series):
    orthanc = orthanc_factory(extra_config={"Plugins": [plugin_path, DICOMWEB_PLUGIN],
                                            "DicomWeb": {"Enable": True, "Root": "/dicom-web/"}})
    answer = orthanc.stow_rs(series[:3])
    assert answer.status_code == 200, answer.text
    stats = orthanc.stats()
    plugin = stats["transports"]["plugin"]
    assert plugin["instances"]["stored"] == 3
    assert stored(stats, "rest") == 0
    # One HTTP request, three parts: the first from the request's arrival, the next ones chained.
    assert plugin["phases"]["receive"]["count"] == 3
    check_phases_within_total(plugin, "plugin")
    # serverTotal is the sum of the phases right inside it (with orthanc-dicomweb loaded after this plugin,
    # its callbacks' otherFilters and otherOnStored too).
    inside = [name for name, phase in stats["definitions"]["phases"].items() if phase.get("partOfServerTotal")]
    assert {"receive", "preStore", "otherFilters", "persist", "otherOnStored"} <= set(inside)
    assert plugin["phases"]["otherOnStored"]["count"] == 3
    assert abs(sum(plugin["phases"][name].get("sum", 0) for name in inside)
               - plugin["phases"]["serverTotal"]["sum"]) < 0.001


def test_plugin_cost_is_measured_inside_orthanc(orthanc, series_factory):
    """The plugin times itself: a sample of its callback calls, SDK calls included, in thread CPU
    time, and its own thread, next to what Orthanc spends per instance."""
    files = series_factory(64, 4, size=64)
    orthanc.reset_stats()
    orthanc.http_upload(files)
    stats = wait_for(orthanc, lambda s: changes_paired(s, "rest") == len(files))
    cost = stats["pluginCost"]
    period = cost["samplingPeriod"]
    assert period == 17
    callbacks = cost["callbacks"]
    ingest_calls = ("httpRequestFilter", "receivedInstance", "instanceFilter", "storedInstance")
    timed = sum(callbacks[name]["count"] for name in ingest_calls)
    # 4 calls per instance on the HTTP threads (plus the GETs of wait_for): one in 17 is timed,
    # give or take one per thread; timing every call would give 256 or more.
    assert 4 * len(files) // period - 4 <= timed <= 4 * len(files) // period + 12, callbacks
    assert callbacks["transcoder"]["count"] == 0  # no IngestTranscoding
    assert "cstoreFilter" not in callbacks  # the plugin has no C-STORE filter
    for name in ingest_calls:  # the sample rotates through the callbacks of an instance
        assert callbacks[name]["count"] >= 1, (name, callbacks)
        assert 0 <= callbacks[name]["min"] <= callbacks[name]["max"] < 50, (name, callbacks[name])
    assert cost["storedInstances"] == len(files)
    # Microseconds of the plugin against milliseconds of Orthanc per instance.
    assert 0 < cost["microsecondsPerStoredInstance"] < 200
    server_mean_us = stats["transports"]["all"]["phases"]["serverTotal"]["mean"] * 1000
    assert cost["microsecondsPerStoredInstance"] < server_mean_us / 10
    assert 0 < cost["percentOfServerTotal"] < 10
    assert "CLOCK_THREAD_CPUTIME_ID" in cost["clock"]
    assert cost["threads"]["ingestWatcher"]["running"] is True
    assert cost["totalMs"] == pytest.approx(cost["callbacksMs"] + cost["threadsMs"], abs=0.002)

    orthanc.reset_stats()
    cost = orthanc.stats()["pluginCost"]
    assert cost["callbacks"]["storedInstance"]["count"] == 0
    assert cost["microsecondsPerStoredInstance"] is None
