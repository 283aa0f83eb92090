"""A fleet on Prometheus: a real Prometheus server scrapes /perf/metrics of two Orthancs, and its
PromQL answers equal what the two plugins say: the sum of stored instances exactly, the fleet's p99
of serverTotal within one `le` step of the p99 of the two nodes' merged histograms."""
import time

import pytest
from ingest_perf.prometheus_server import PrometheusServer, parse_metrics

BUCKETS = "orthanc_ingest_phase_duration_seconds_bucket"
STORED = 'orthanc_ingest_instances_total{outcome="stored"}'
FLEET_P99 = ('histogram_quantile(0.99, sum by (le) (rate(%s{phase="serverTotal"}[1m])))' % BUCKETS)


def merged_p99_step(texts):
    """The two nodes' serverTotal buckets (every transport) merged: the (lower, upper) le step
    holding their p99, the ladder, and the merged cumulative counts."""
    merged = {}
    for text in texts:
        samples, _ = parse_metrics(text)
        for (name, labels), value in samples.items():
            labels = dict(labels)
            if name == BUCKETS and labels["phase"] == "serverTotal":
                merged[labels["le"]] = merged.get(labels["le"], 0) + value
    ladder = sorted((float(le), count) for le, count in merged.items())
    total = ladder[-1][1]
    rank = 0.99 * total
    for i, (le, count) in enumerate(ladder):
        if count >= rank:
            return (ladder[i - 1][0] if i > 0 else 0.0, le), [le for le, _ in ladder], total
    raise AssertionError("no step")


@pytest.fixture
def fleet(orthanc_factory, tmp_path):
    nodes = [orthanc_factory(), orthanc_factory()]
    prometheus = PrometheusServer(str(tmp_path), ["127.0.0.1:%d" % node.http_port for node in nodes])
    yield nodes, prometheus
    prometheus.stop()


def test_fleet_queries_equal_the_plugins(fleet, series_factory):
    nodes, prometheus = fleet
    # rate() needs a sample before the ingest. A transport's phase histograms appear with its first
    # instance (docs/prometheus.md): one instance each first, then a scrape of both that has them.
    warm_up = series_factory(3, 40, size=64)
    nodes[0].storescu(warm_up[:1], calling_aet="CT01")
    nodes[0].http_upload(warm_up[1:2])
    nodes[1].storescu(warm_up[2:], calling_aet="MR02")
    prometheus.wait_for(lambda: prometheus.scalar(
        'count(%s{phase="serverTotal",le="+Inf"} == 1)' % BUCKETS) == 3, "a first scrape of both Orthancs")
    nodes[0].storescu(series_factory(12, 41, size=64), calling_aet="CT01")
    nodes[0].http_upload(series_factory(4, 42, size=64))
    nodes[1].storescu(series_factory(7, 43, size=64), calling_aet="MR02")

    stored = [node.stats()["transports"]["all"]["instances"]["stored"] for node in nodes]
    assert stored == [18, 8]
    texts = [node.get("/perf/metrics").text for node in nodes]
    prometheus.wait_for(lambda: prometheus.scalar("sum(%s)" % STORED) == sum(stored), "the ingest scraped")
    # A second scrape after the ingest, so that the last sample of every series is the final one.
    time.sleep(2.5)

    assert prometheus.scalar("sum(%s)" % STORED) == sum(stored)
    (lower, upper), ladder, total = merged_p99_step(texts)
    assert total == sum(stored)
    fleet_p99 = prometheus.scalar(FLEET_P99)
    # Within one le step of the step that holds the merged p99.
    i = ladder.index(upper)
    tolerance_low = ladder[i - 2] if i >= 2 else 0.0
    tolerance_high = ladder[min(i + 1, len(ladder) - 1)]
    print("fleet p99 serverTotal: Prometheus %.6f s; plugins' merged buckets: step (%s, %s] s; nodes' own p99 "
          "%s ms" % (fleet_p99, lower, upper, [node.stats()["transports"]["all"]["phases"]["serverTotal"]["p99"]
                                              for node in nodes]))
    assert tolerance_low <= fleet_p99 <= tolerance_high, (fleet_p99, lower, upper)
    # The same over the raw cumulative buckets (since start), without rate's extrapolation.
    raw = prometheus.scalar('histogram_quantile(0.99, sum by (le) (%s{phase="serverTotal"}))' % BUCKETS)
    assert lower <= raw <= upper, (raw, lower, upper)
