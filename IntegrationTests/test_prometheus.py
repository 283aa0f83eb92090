"""GET /perf/metrics against a real Orthanc: promtool accepts it, and its counts are /perf/stats'."""
import math
import subprocess
import time

import pydicom
import pytest
from prometheus_client.parser import text_string_to_metric_families

from ingest_perf.hostile_senders import c_store_raw_aets
from ingest_perf.orthanc_process import ALL_ORTHANCS
from ingest_perf.prometheus_server import PROMTOOL_BINARY, PrometheusServer, parse_metrics

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0


def select(samples, name, **labels):
    wanted = set(labels.items())
    return {dict(k[1]).get("le", ""): v for k, v in samples.items() if k[0] == name and wanted <= set(k[1])}


def fetch_metrics(orthanc):
    answer = orthanc.get("/perf/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return answer.text


@pytest.fixture
def ingested(orthanc, series_factory):
    orthanc.storescu(series_factory(8, 31, size=64), calling_aet="CT01")
    orthanc.http_upload(series_factory(5, 32, size=64))
    return orthanc


def test_promtool_accepts_the_exposition(ingested):
    text = fetch_metrics(ingested)
    check = subprocess.run([PROMTOOL_BINARY, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    # promtool exits 1 for lint problems as well as for a broken format; both must be absent.
    assert check.returncode == 0, check.stdout + check.stderr


def test_counts_equal_perf_stats(ingested):
    text = fetch_metrics(ingested)
    stats = ingested.stats()
    samples, types = parse_metrics(text)
    assert types["orthanc_ingest_phase_duration_seconds"] == "histogram"
    assert types["orthanc_ingest_instances_total"] == "counter"
    for transport in ("dicom", "rest"):
        figures = stats["transports"][transport]
        outcomes = {dict(k[1])["outcome"]: v for k, v in samples.items()
                    if k[0] == "orthanc_ingest_instances_total" and dict(k[1])["transport"] == transport}
        assert len(outcomes) == 6
        assert outcomes == {name: figures["instances"][name] for name in outcomes}
        for phase, histogram in figures["phases"].items():
            if not isinstance(histogram, dict) or not histogram.get("count"):
                continue
            labels = dict(transport=transport, phase=phase)
            # every phase: its sum and count
            assert select(samples, "orthanc_ingest_phase_seconds_count", **labels) == {"": histogram["count"]}
            total = select(samples, "orthanc_ingest_phase_seconds_sum", **labels)[""]
            assert math.isclose(total * 1000, histogram["mean"] * histogram["count"], rel_tol=0.01, abs_tol=0.01)
            buckets = select(samples, "orthanc_ingest_phase_duration_seconds_bucket", **labels)
            if phase not in ("serverTotal", "associationGap", "requestGap"):
                assert not buckets, labels  # buckets for what an operator alerts on only
                continue
            assert buckets["+Inf"] == histogram["count"], labels
            assert select(samples, "orthanc_ingest_phase_duration_seconds_count", **labels) == {"": histogram["count"]}
            # cumulative, hence never decreasing along the ladder
            ladder = sorted((float(le), v) for le, v in buckets.items())
            assert all(a[1] <= b[1] for a, b in zip(ladder, ladder[1:])), labels
    stored = stats["transports"]["dicom"]["instances"]["stored"]
    assert stored == 8
    # Per sender, over every transport: the calling AET's instances and gaps, the address's.
    assert select(samples, "orthanc_ingest_instances_by_remote_aet_total", remote_aet="CT01", outcome="stored") == {
        "": stored}
    gaps = select(samples, "orthanc_ingest_association_gap_seconds_by_remote_aet_count", remote_aet="CT01")
    assert gaps == {"": stats["transports"]["dicom"]["phases"]["associationGap"]["count"]}
    everything = sum(stats["transports"][t]["instances"]["stored"] for t in ("dicom", "rest"))
    assert select(samples, "orthanc_ingest_instances_by_remote_ip_total", remote_ip="127.0.0.1",
                  outcome="stored") == {"": everything}
    assert not [name for name, _ in samples if "sop_class" in name or "stream" in name.replace("streams_", "")]


def test_methods_and_parameters(orthanc):
    assert orthanc.post("/perf/metrics").status_code == 405
    refused = orthanc.get("/perf/metrics", params={"transport": "dicom"})
    assert refused.status_code == 400
    assert refused.json()["parameter"] == "transport"
    samples, _ = parse_metrics(fetch_metrics(orthanc))
    assert samples[("orthanc_ingest_up", frozenset())] == 1
    assert orthanc.get("/perf/metrics?").status_code == 200  # an empty fragment is no parameter
    for query in ("%FF%00=1", "a=%00", "=x", "&".join("p%d=1" % i for i in range(300))):
        answer = orthanc.get("/perf/metrics?" + query)
        assert answer.status_code == 400, query
        assert answer.json()["error"].startswith("unknown parameter"), query


def test_hashed_peers_leave_no_aet(orthanc_factory, series_factory):
    orthanc = orthanc_factory(ingest_perf={"HashPeers": True})
    orthanc.storescu(series_factory(3, 33, size=64), calling_aet="SECRET01")
    text = fetch_metrics(orthanc)
    assert "SECRET01" not in text and "127.0.0.1" not in text
    assert 'remote_aet="aet-' in text


def test_key_figures_in_orthancs_own_metrics(ingested):
    time.sleep(1.1)  # published at most once a second
    answer = ingested.get("/tools/metrics-prometheus")
    assert answer.status_code == 200
    values = {}
    for line in answer.text.splitlines():
        if line.startswith("orthanc_ingest_perf_"):
            name, value = line.split(" ")[:2]
            values[name] = float(value)
    stats = ingested.stats()["transports"]
    for transport in ("dicom", "rest", "plugin", "job"):
        prefix = "orthanc_ingest_perf_%s_" % transport
        assert values[prefix + "stored_instances_since_start"] == stats[transport]["instances"]["stored"]
    server_total = stats["dicom"]["phases"]["serverTotal"]
    for quantile in ("p50", "p99"):
        published = values["orthanc_ingest_perf_dicom_server_total_%s_seconds_since_start" % quantile]
        assert math.isclose(published * 1000, server_total[quantile], rel_tol=0.001), quantile
    # The last minute, from the same time windows as /perf/stats?window=1m.
    window = ingested.stats(window="1m")["transports"]["dicom"]
    assert math.isclose(values["orthanc_ingest_perf_dicom_server_total_p50_seconds_1m"] * 1000,
                        window["phases"]["serverTotal"]["p50"], rel_tol=0.001)
    assert math.isclose(values["orthanc_ingest_perf_dicom_association_gap_p50_seconds_1m"] * 1000,
                        window["phases"]["associationGap"]["p50"], rel_tol=0.001)
    # the window's covered time grew between the two readings: the rate differs by that much
    assert math.isclose(values["orthanc_ingest_perf_dicom_instances_per_second_1m"],
                        window["throughput"]["instancesPerSecond"], rel_tol=0.3)
    assert values["orthanc_ingest_perf_dicom_instances_per_second_1m"] > 0
    assert values["orthanc_ingest_perf_job_instances_per_second_1m"] == 0


def test_latin1_aets_keep_the_exposition_valid(orthanc_factory, series_factory, tmp_path):
    """One C-STORE with Latin-1 calling and called AE titles (issue 21): the plugin shows them
    escaped, so promtool, prometheus_client's parser and a real Prometheus accept the exposition."""
    orthanc = orthanc_factory()
    datasets = [pydicom.dcmread(path) for path in series_factory(2, 33, size=16)]
    assert c_store_raw_aets(orthanc.dicom_port, datasets, b"CT_SALLE_\xc9", b"PACS_H\xd4PITAL") == [0, 0]
    answer = orthanc.get("/perf/metrics")
    assert answer.status_code == 200
    assert all(byte < 0x80 for byte in answer.content)
    text = answer.content.decode("utf-8")
    labels = {sample.labels.get("remote_aet") for family in text_string_to_metric_families(text)
              for sample in family.samples if "remote_aet" in sample.labels}
    assert "CT_SALLE_\\xC9" in labels, labels
    check = subprocess.run([PROMTOOL_BINARY, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    stats = orthanc.stats()
    assert stats["labels"]["remoteAet"]["values"] == ["CT_SALLE_\\xC9"]

    (tmp_path / "prometheus").mkdir()
    prometheus = PrometheusServer(str(tmp_path / "prometheus"), ["127.0.0.1:%d" % orthanc.http_port])
    try:
        stored = 'sum(orthanc_ingest_instances_by_remote_aet_total{outcome="stored",remote_aet="CT_SALLE_\\\\xC9"})'
        prometheus.wait_for(lambda: prometheus.scalar(stored) == 2, "the Latin-1 AET's instances scraped")
        assert prometheus.scalar('count(up == 1)') == 1
    finally:
        prometheus.stop()


def test_only_what_can_be_measured_and_an_idle_scrape_under_30_kb(orthanc, series_factory):
    """A phase the running mode cannot time on a transport is not exported (it was, as zeros: 117 KB idle,
    a p99-per-phase query listing 11 phases, 6 of them NaN); a transport's phase histograms appear with its
    first instance."""
    idle = fetch_metrics(orthanc)
    assert len(idle.encode()) < 30 * 1024, len(idle)
    assert "orthanc_ingest_phase_duration_seconds_bucket" not in idle
    samples, _ = parse_metrics(idle)
    failed = {dict(labels)["transport"] for (name, labels) in samples
              if name == "orthanc_ingest_instances_total" and dict(labels)["outcome"] == "failed"}
    assert failed == {"rest", "dicom", "plugin", "job"}  # zeros from the start: rate() and the alerts need them
    assert select(samples, "orthanc_ingest_plugin_state", state="running") == {"": 1}

    orthanc.storescu(series_factory(4, 33, size=64), calling_aet="CT01")
    orthanc.http_upload(series_factory(3, 34, size=64))
    stats = orthanc.stats()
    samples, _ = parse_metrics(fetch_metrics(orthanc))
    exported = {}
    for name, labels in samples:
        if name == "orthanc_ingest_phase_seconds_count":
            labels = dict(labels)
            exported.setdefault(labels["transport"], set()).add(labels["phase"])
    measured = {transport: {phase for phase, figures in stats["transports"][transport]["phases"].items()
                            if figures.get("observable") is not False}
                for transport in ("dicom", "rest")}
    assert exported == measured, (exported, measured)
    assert "receive" not in exported["dicom"] and "associationGap" not in exported["rest"]
    # The diagnosis, one series per rule, fired or not.
    diagnosis = orthanc.get("/perf/diagnosis").json()
    ranks = {dict(labels)["rule"]: value for (name, labels), value in samples.items()
             if name == "orthanc_ingest_diagnosis_finding_rank"}
    assert set(ranks) == {rule["id"] for rule in diagnosis["rules"]}
    assert {rule for rule, rank in ranks.items() if rank} == {finding["id"] for finding in diagnosis["findings"]}
