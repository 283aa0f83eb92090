"""Resources/prometheus-alerts.yml: promtool accepts the rules and their unit tests pass
(Resources/prometheus-alerts.test.yml: each alert silent, pending and firing when it should), and a real
Prometheus scraping real Orthancs loads them and starts the alerts of what those Orthancs suffer: a plugin
that could not start, a C-STORE stall; an Orthanc that ingests well starts none."""
import os
import subprocess

from ingest_perf.prometheus_server import PROMTOOL_BINARY, PrometheusServer
from ingest_perf.stats_checks import stored, wait_for

RESOURCES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Resources")
RULES = os.path.join(RESOURCES, "prometheus-alerts.yml")
ALERTS = {"OrthancIngestStoresFailing", "OrthancIngestStoreHung", "OrthancIngestCStoreStall",
          "OrthancIngestPluginInert", "OrthancIngestUnreadableInstances"}


def promtool(*args):
    return subprocess.run([PROMTOOL_BINARY] + list(args), capture_output=True, text=True, timeout=120, cwd=RESOURCES)


def test_promtool_checks_the_rules_and_runs_their_unit_tests():
    check = promtool("check", "rules", RULES)
    assert check.returncode == 0 and "SUCCESS: 5 rules found" in check.stdout, check.stdout + check.stderr
    tests = promtool("test", "rules", "prometheus-alerts.test.yml")
    assert tests.returncode == 0 and "SUCCESS" in tests.stdout, tests.stdout + tests.stderr
    # Each alert is tested, firing at least once.
    text = open(os.path.join(RESOURCES, "prometheus-alerts.test.yml")).read()
    for alert in ALERTS:
        assert "alertname: %s\n        exp_alerts:\n          - exp_labels" % alert in text, alert


def test_a_real_prometheus_starts_the_alerts_of_real_orthancs(orthanc_factory, series_factory, tmp_path):
    inert = orthanc_factory(ingest_perf={"MaxThreads": 0})
    stalled = orthanc_factory()
    healthy = orthanc_factory()
    stalled.storescu(series_factory(12, 61, size=64), calling_aet="CT_STALL")  # DCMTK, no TCP_NODELAY
    healthy.http_upload(series_factory(12, 62, size=64))
    wait_for(stalled, lambda s: stored(s, "dicom") == 12)
    findings = [f["id"] for f in stalled.get("/perf/diagnosis").json()["findings"]]
    assert "cstore-answer-stall" in findings, findings
    targets = {"127.0.0.1:%d" % o.http_port: name for o, name in ((inert, "inert"), (stalled, "stalled"),
                                                                    (healthy, "healthy"))}
    prometheus = PrometheusServer(str(tmp_path), list(targets), rule_files=[RULES])
    try:
        def alerts():
            return {(a["labels"]["alertname"], targets[a["labels"]["instance"]], a["state"])
                    for a in prometheus.get("/api/v1/alerts")["alerts"]}
        # "for" holds them pending: what matters is which Orthanc starts which alert.
        expected = {("OrthancIngestPluginInert", "inert", "pending"),
                    ("OrthancIngestCStoreStall", "stalled", "pending")}
        prometheus.wait_for(lambda: alerts() >= expected, "the alerts of the inert and the stalled Orthancs")
        (group,) = prometheus.get("/api/v1/rules")["groups"]
        assert {rule["name"] for rule in group["rules"]} == ALERTS
        assert all(rule["health"] == "ok" for rule in group["rules"]), group["rules"]
        assert alerts() == expected, alerts()  # and none for the healthy Orthanc
    finally:
        prometheus.stop()
