"""Injected faults and overflowing tables: Orthanc ingests exactly what it ingests without the
plugin, the plugin counts what went wrong, and /perf/stats keeps answering.

- The fault build (build/libOrthancIngestPerfFaults.so, CMake option INGEST_PERF_FAULT_INJECTION,
  which the test command turns on): the hot path's SDK accessors fail at random the way the SDK
  reports a failure, and building a /perf/stats answer throws std::bad_alloc at random
  (INGEST_PERF_FAULTS, Plugin/Platform/FaultInjection.h). On Orthanc 1.10.1 and 1.12.7.
- The release plugin with every bound reached at once: more ingest threads than MaxThreads, one
  value per label dictionary and one labelled series for many calling AETs, a change table of 16
  entries for hundreds of instances.

Each case ingests the same series, over HTTP and storescu at once, into an Orthanc with the plugin
and into one without it, and compares statuses, stored instance IDs and the MD5 of every stored
file (ingest_comparison.py).
"""
import os
import time

import pytest

from ingest_comparison import StatsPoller, crash_markers, run_clients, stored_files
from ingest_perf.clients import Concurrently
from ingest_perf.orthanc_process import ALL_ORTHANCS

FAULTS = "sdk=0.2,alloc=0.1,seed=7"


@pytest.fixture(scope="module")
def fault_plugin(plugin_path):
    path = os.path.join(os.path.dirname(plugin_path), "libOrthancIngestPerfFaults.so")
    if not os.path.isfile(path):
        pytest.fail("%s is missing: configure the build with -DINGEST_PERF_FAULT_INJECTION=ON (the test command "
                    "does)" % path, pytrace=False)
    return path


def work(series_factory, http_clients, http_count, storescu_clients, associations, per_association, seed):
    """Clients with their own series: HTTP clients first, then storescu clients, each of which runs
    `associations` associations of its own calling AET one after the other."""
    clients = []
    for index in range(http_clients):
        clients.append(("http", "http%d" % index, series_factory(http_count, seed + index, size=128)))
    for index in range(storescu_clients):
        files = series_factory(associations * per_association, seed + 100 + index, size=128)
        for a in range(associations):
            clients.append(("storescu-chain", "S%dA%02d" % (index, a), files[a * per_association:(a + 1) * per_association]))
    return clients


def run_work(orthanc, clients):
    """storescu clients of one index run their associations in sequence, all indexes at once."""
    chains = {}
    direct = []
    for kind, name, files in clients:
        if kind == "storescu-chain":
            chains.setdefault(name.split("A")[0], []).append((name, files))
        else:
            direct.append((kind, name, files))
    merged = {"http": {}, "storescu": {}}

    def chain(associations):
        for name, files in associations:
            merged["storescu"].update(run_clients(orthanc, [("storescu", name, files)])["storescu"])

    Concurrently([lambda chained=chained: chain(chained) for chained in chains.values()] +
                 [lambda: merged["http"].update(run_clients(orthanc, direct)["http"])]).run()
    return merged


def ingest_both(orthanc_factory, clients, **plugin_kwargs):
    """The same clients into an Orthanc without the plugin, then one with it (polled meanwhile).
    Returns (reference results, reference files, results, files, poller, orthanc)."""
    reference = orthanc_factory(plugin_path=None)
    reference_results = run_work(reference, clients)
    reference_files = stored_files(reference)
    reference.stop()
    orthanc = orthanc_factory(**plugin_kwargs)
    with StatsPoller(orthanc) as poller:
        results = run_work(orthanc, clients)
    return reference_results, reference_files, results, stored_files(orthanc), poller, orthanc


def final_stats(orthanc, **params):
    """GET /perf/stats until it answers 200 (the fault build may answer 503); returns (stats, 503 count)."""
    refused = 0
    for _ in range(200):
        answer = orthanc.get("/perf/stats", params=params)
        if answer.status_code == 200:
            return answer.json(), refused
        assert answer.status_code == 503 and "error" in answer.json(), (answer.status_code, answer.text[:300])
        refused += 1
    raise AssertionError("/perf/stats never answered 200")


def check_same_ingest(reference_results, reference_files, results, files):
    differing = {kind: {key: (reference_results[kind].get(key), value) for key, value in results[kind].items()
                        if reference_results[kind].get(key) != value} for kind in results}
    assert results == reference_results, differing  # every HTTP status and ID, every storescu exit code
    assert set(files) == set(reference_files)
    assert files == reference_files  # the MD5 of every stored file
    assert all(status == 200 for status, _ in results["http"].values())
    assert all(code == 0 for code in results["storescu"].values())


@pytest.mark.parametrize("orthanc_version", ALL_ORTHANCS)
def test_injected_sdk_and_allocation_faults(orthanc_factory, fault_plugin, series_factory, orthanc_version):
    clients = work(series_factory, http_clients=2, http_count=30, storescu_clients=2, associations=1,
                   per_association=30, seed=1100)
    reference_results, reference_files, results, files, poller, orthanc = ingest_both(
        orthanc_factory, clients, plugin_path=fault_plugin, env={"INGEST_PERF_FAULTS": FAULTS})

    check_same_ingest(reference_results, reference_files, results, files)
    assert len(files) == 120
    # /perf/stats kept answering: a 200 with the statistics, or a 503 with a JSON reason.
    assert not poller.malformed(), poller.malformed()[:3]
    during = poller.statuses()
    assert during.get(200, 0) > 0 and during.get(503, 0) > 0, during

    stats, refused = final_stats(orthanc)
    injected = stats["faultInjection"]
    errors = stats["errors"]
    # Every injected SDK failure was counted, and none escaped as an exception.
    assert injected["sdkCallsInjected"] > 0
    assert errors["sdkCallsFailed"] == injected["sdkCallsInjected"]
    assert errors["callbackExceptions"] == 0
    # Every injected allocation failure became one 503 answer, which the counter saw.
    assert injected["allocationsInjected"] == during.get(503, 0) + refused == errors["failedAnswers"]
    # What the plugin recorded is still exact: one stored instance per instance Orthanc stored.
    transports = stats["transports"]
    assert transports["rest"]["instances"]["stored"] == 60
    assert transports["dicom"]["instances"]["stored"] == 60
    assert transports["all"]["instances"]["stored"] == orthanc.get("/statistics").json()["CountInstances"]
    # A failed size is not a size: no 18 EB instance.
    assert transports["all"]["bytesPerInstance"]["stored"]["max"] < 10 ** 6
    # Failed label reads are labelled "(unknown)", not "(none)".
    unknown = [name for name, label in stats["labels"].items() if "(unknown)" in label.get("values", [])]
    assert unknown, stats["labels"]
    assert stats["openRecords"]["count"] == 0

    print("\n  Orthanc %s, %s: %d instances, %d /perf/stats answers (%d refused with 503), SDK calls failed "
          "%d injected / %d counted, allocations failed %d injected / %d answers counted, labels (unknown): %s"
          % (orthanc_version, FAULTS, len(files), len(poller.reads) + refused + 1, during.get(503, 0) + refused,
             injected["sdkCallsInjected"], errors["sdkCallsFailed"], injected["allocationsInjected"],
             errors["failedAnswers"], ", ".join(unknown)))
    assert orthanc.stop() == 0
    assert not crash_markers(orthanc.log_text())


def test_every_bound_overflowing(orthanc_factory, series_factory, plugin_path, tmp_path):
    # 6 HTTP clients and 2 storescu clients at once against MaxThreads 2; each storescu client
    # runs 6 associations of its own calling AET (12 AETs for a dictionary of 1 value and a
    # single labelled series); 252 instances through a change table of 16 entries, while the
    # SlowChangeConsumer test plugin (loaded first) holds Orthanc's change thread at a gate until the
    # ingest is over, then 20 ms per instance: the changes lag behind the stores by all of them,
    # whatever else the machine runs (a loaded machine may ingest slower than 50 instances/s), and
    # the table overflows.
    gate = tmp_path / "change-gate"
    clients = work(series_factory, http_clients=6, http_count=30, storescu_clients=2, associations=6,
                   per_association=6, seed=1200)
    limits = {"MaxThreads": 2, "MaxLabelValues": 1, "MaxStreams": 1, "ChangeTableSize": 16}
    slow_changes = os.path.join(os.path.dirname(plugin_path), "libTestSlowChangeConsumer.so")
    reference_results, reference_files, results, files, poller, orthanc = ingest_both(
        orthanc_factory, clients, ingest_perf=limits, plugin_path=None,
        env={"SLOW_CHANGE_MS": "20", "SLOW_CHANGE_GATE": str(gate)}, extra_config={"Plugins": [slow_changes, plugin_path]})
    gate.touch()

    check_same_ingest(reference_results, reference_files, results, files)
    assert len(files) == 252
    assert not poller.malformed(), poller.malformed()[:3]
    assert set(poller.statuses()) == {200}, poller.statuses()

    # Wait for Orthanc's change thread to deliver the last NewInstance changes.
    deadline = time.monotonic() + 60
    while True:
        stats = orthanc.stats()
        if stats["changes"]["newInstanceBacklog"] == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)

    # Each overflow is counted where the configuration says it is.
    assert stats["openRecords"]["threadsTracked"] <= 2
    assert stats["openRecords"]["threadsUntracked"] > 0
    labels = stats["labels"]
    assert labels["remoteAet"]["overflowed"] > 0 and len(labels["remoteAet"]["values"]) == 1
    assert labels["streams"]["used"] <= labels["streams"]["capacity"] + 5  # + one "(other)" stream per transport
    assert labels["streams"]["overflowed"] > 0
    errors = stats["errors"]
    assert errors["changeTableEvictions"] > 0
    assert errors["callbackExceptions"] == 0 and errors["sdkCallsFailed"] == 0

    # Threads beyond MaxThreads are timed all the same: the counts stay exact.
    transports = stats["transports"]
    assert transports["rest"]["instances"]["stored"] == 180
    assert transports["dicom"]["instances"]["stored"] == 72
    assert transports["all"]["instances"]["stored"] == orthanc.get("/statistics").json()["CountInstances"] == 252
    for transport in ("rest", "dicom"):
        phases = transports[transport]["phases"]
        assert phases["serverTotal"]["count"] == transports[transport]["instances"]["stored"], transport
    # The labelled series, "(other)" included, add up to the transports.
    grouped = orthanc.stats(groupBy="remoteAet")
    assert sum(g["instances"]["stored"] for g in grouped["groups"]) == 252
    # A pairing is lost only to an eviction or a skipped lock, never silently.
    changes = stats["changes"]
    paired = transports["all"]["phases"]["changeDispatch"]["count"] + \
        transports["all"]["phases"]["changeDispatch"]["deliveredBeforeOnStored"]
    assert changes["delivered"]["NewInstance"] == 252
    assert 252 - paired <= errors["changeTableEvictions"] + errors["changeCorrelationSkipped"]

    print("\n  252 instances, 6 HTTP + 2 storescu clients (12 calling AETs): threadsUntracked %d, remoteAet "
          "overflowed %d, streams overflowed %d, changeTableEvictions %d, pairings lost %d, %d /perf/stats answers"
          % (stats["openRecords"]["threadsUntracked"], labels["remoteAet"]["overflowed"],
             labels["streams"]["overflowed"], errors["changeTableEvictions"], 252 - paired, len(poller.reads)))
    assert orthanc.stop() == 0
    assert not crash_markers(orthanc.log_text())
