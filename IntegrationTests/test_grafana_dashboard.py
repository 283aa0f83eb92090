"""Resources/grafana-dashboard.json: valid JSON, its queries name only metrics and labels that a live
/perf/metrics answer has, a real Prometheus scraping that Orthanc evaluates every one of them (the
diagnosis's verdict included, after a C-STORE stall), it has the breakdown of where the time goes and
the verdict, and every panel has one unit (seconds never beside counts)."""
import json
import os
import re

from ingest_perf.prometheus_server import PrometheusServer, parse_metrics

DASHBOARD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Resources",
                         "grafana-dashboard.json")
# Grafana's variables, as a dashboard user would set them.
VARIABLES = {"$__rate_interval": "1m", "$instance": ".*", "$transport": ".*"}
PROMQL_WORDS = {"by", "without", "and", "or", "unless", "on", "ignoring", "group_left", "group_right", "bool",
                "offset"}
# Labels that Prometheus adds to every scraped series.
TARGET_LABELS = {"instance", "job"}


def load():
    with open(DASHBOARD, encoding="utf-8") as f:
        return json.load(f)


def expressions():
    dashboard = load()
    assert dashboard["panels"], "no panel"
    assert len({panel["id"] for panel in dashboard["panels"]}) == len(dashboard["panels"])
    found = []
    for panel in dashboard["panels"]:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            expr = target["expr"]
            for name, value in VARIABLES.items():
                expr = expr.replace(name, value)
            found.append((panel["title"], expr))
    return found


def names_in(expr):
    """(metric names, label names) that a PromQL expression uses."""
    labels = set()
    for matchers in re.findall(r"\{([^}]*)\}", expr):
        labels.update(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*[=!]~?\s*"', matchers))
    for grouping in re.findall(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)", expr):
        labels.update(name.strip() for name in grouping.split(",") if name.strip())
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", bare)
    bare = re.sub(r"\b(?:by|without|on|ignoring)\s*\([^)]*\)", " ", bare)
    metrics = {name for name in re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", bare)
               if name not in PROMQL_WORDS}
    return metrics, labels


def test_one_unit_per_panel_the_breakdown_and_the_verdict():
    panels = load()["panels"]
    for panel in panels:
        unit = panel["fieldConfig"]["defaults"]["unit"]
        assert unit, panel["title"]
        # No series of a panel on an axis of its own unit.
        assert not any("unit" in json.dumps(o.get("properties")) for o in panel["fieldConfig"].get("overrides", [])), \
            panel["title"]
        metrics = set()
        for target in panel["targets"]:
            metrics |= names_in(target["expr"])[0]
        durations = {name for name in metrics if "_seconds" in name}
        # Seconds on a panel in seconds, and only there: never seconds and counts on one axis.
        assert durations == (metrics if unit == "s" else set()), (panel["title"], unit, metrics)
    by_title = {panel["title"]: panel for panel in panels}
    breakdown = by_title["Where the time goes, mean per instance ($transport)"]
    assert breakdown["fieldConfig"]["defaults"]["custom"]["stacking"]["mode"] == "normal"
    assert breakdown["repeat"] == "transport"
    (expr,) = [target["expr"] for target in breakdown["targets"]]
    assert "associationGap|receive|preStore|persist" in expr  # the cycle of the page's bars
    verdict = [panel for panel in panels if "orthanc_ingest_diagnosis_finding_rank" in json.dumps(panel["targets"])]
    assert len(verdict) == 1 and "verdict" in verdict[0]["title"]


def test_names_only_what_the_plugin_exports(orthanc, series_factory):
    orthanc.storescu(series_factory(3, 51, size=64), calling_aet="CT01")
    samples, _ = parse_metrics(orthanc.get("/perf/metrics").text)
    live_metrics = {name for name, _ in samples}
    live_labels = {label for _, labels in samples for label, _ in labels} | TARGET_LABELS
    used = set()
    for title, expr in expressions():
        metrics, labels = names_in(expr)
        assert metrics, (title, expr)
        assert metrics <= live_metrics, (title, metrics - live_metrics)
        assert labels <= live_labels, (title, labels - live_labels)
        used |= metrics
    # the three queries of the README are there
    assert {"orthanc_ingest_instances_total", "orthanc_ingest_phase_duration_seconds_bucket",
            "orthanc_ingest_association_gap_seconds_by_remote_aet_sum"} <= used


def test_prometheus_evaluates_every_query(orthanc, series_factory, tmp_path):
    prometheus = PrometheusServer(str(tmp_path), ["127.0.0.1:%d" % orthanc.http_port])
    try:
        prometheus.wait_for(lambda: prometheus.scalar("count(orthanc_ingest_up)") == 1, "a first scrape")
        # Enough C-STORE instances for the diagnosis to name the stall (the verdict panel has a row).
        orthanc.storescu(series_factory(12, 52, size=64), calling_aet="CT01")
        prometheus.wait_for(lambda: prometheus.scalar('sum(orthanc_ingest_instances_total{outcome="stored"})') == 12,
                            "the ingest scraped")
        # a second sample of the per-sender figures, which appeared with the ingest
        prometheus.wait_for(lambda: prometheus.scalar(
            'count_over_time(orthanc_ingest_instances_by_remote_aet_total{outcome="stored"}[1m])') >= 2, "two samples")
        for title, expr in expressions():
            assert prometheus.query(expr), (title, expr)
    finally:
        prometheus.stop()
