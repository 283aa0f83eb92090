"""The large answers do not grow Orthanc's memory: with a full ring of 4,096 recent instances,
1,000 requests of each large route (/perf/trace, /perf/slowest, /perf/stats with groupBy,
/perf/metrics), from several connections at once (several of Orthanc's HTTP threads, each with its
own malloc arena), leave Orthanc's resident memory within a few MB of where it was; with Orthanc
1.10.1's HTTP compression (gzip, on by default), Orthanc's own compression buffer of a large answer
stays in its thread's arena, a bounded amount that more requests do not grow
(docs/rest-api.md#memory-of-the-answers)."""
import concurrent.futures
import os
import time

import requests

from ingest_perf.clients import Concurrently, split
from ingest_perf.stats_checks import stored, wait_for

INSTANCES = 4096
# The test command sends 200 of each route, 50 per connection (the growth this guards against is each
# HTTP thread's arena keeping the peak of the largest answer it built, there from its first large
# answers); INGEST_PERF_ANSWER_REQUESTS=1000 runs the figure (about 19 minutes on a loaded
# 2-core machine).
REQUESTS = int(os.environ.get("INGEST_PERF_ANSWER_REQUESTS", "200"))
REQUESTS_COMPRESSED = max(REQUESTS // 4, 40)  # each round with gzip: enough to show that more add nothing
CLIENTS = 4
ALLOWED_GROWTH_KB = 12 * 1024

ROUTES = [
    ("/perf/trace", {"seconds": 3600}),
    ("/perf/slowest", {"n": 1000, "window": "1h"}),
    ("/perf/stats", {"groupBy": "remoteIp"}),
    ("/perf/metrics", {}),
]


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/%d/status" % pid)


def hammer(orthanc, route, params, count, encoding):
    with requests.Session() as session:
        sizes = []
        for _ in range(count):
            answer = session.get(orthanc.url + route, params=params, timeout=120,
                                 headers={"Accept-Encoding": encoding})
            assert answer.status_code == 200, answer.text[:500]
            sizes.append(len(answer.content))
        return min(sizes)  # every answer at least this large


def every_route(orthanc, requests_per_route, encoding):
    """Sends `requests_per_route` requests of each route from CLIENTS connections; returns the RSS
    in kB after it and {route: (smallest answer in bytes, seconds, RSS in kB after the route)}."""
    figures = {}
    for route, params in ROUTES:
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            smallest = min(pool.map(lambda _: hammer(orthanc, route, params, requests_per_route // CLIENTS, encoding),
                                    range(CLIENTS)))
        figures[route] = (smallest, time.monotonic() - started, rss_kb(orthanc.pid))
    time.sleep(2)
    return rss_kb(orthanc.pid), figures


def describe(before, after, figures):
    return "RSS %d -> %d kB (%+d kB); %s" % (before, after, after - before, "; ".join(
        "%s: answers of %d bytes or more, %.0f s, RSS then %d kB" % (route, size, seconds, rss)
        for route, (size, seconds, rss) in figures.items()))


def test_large_answers_leave_orthancs_memory_where_it_was(orthanc, series_factory):
    files = series_factory(INSTANCES, 97, size=16)
    Concurrently([lambda part=part: orthanc.http_upload(part) for part in split(files, CLIENTS)]).run()
    wait_for(orthanc, lambda s: stored(s, "all") == INSTANCES, timeout=60)
    assert orthanc.get("/perf/slowest", params={"n": 1}).json()["ring"]["held"] == INSTANCES
    time.sleep(1)

    before = rss_kb(orthanc.pid)  # after the ingest, before any large answer
    plain, figures = every_route(orthanc, REQUESTS, "identity")
    print("\nwithout HTTP compression: " + describe(before, plain, figures))
    assert figures["/perf/trace"][0] > 5000000  # the ring is full: a large answer indeed
    assert plain - before <= ALLOWED_GROWTH_KB, describe(before, plain, figures)

    # Compressed by Orthanc: its compression buffers stay in its threads' arenas, once. Where a round
    # ends depends on which of Orthanc's threads compressed last and whether the plugin's trim came
    # after Orthanc freed its buffer: one round ended at 69 MB where the others end near 88 (a full
    # run, 2026-11-27). So the third round is held to the higher of the two before it: a growth per
    # round shows as much, a round that happened to end low does not fail the test.
    first, figures = every_route(orthanc, REQUESTS_COMPRESSED, "gzip")
    print("gzip, first %d requests of each route: %s" % (REQUESTS_COMPRESSED, describe(plain, first, figures)))
    second, figures = every_route(orthanc, REQUESTS_COMPRESSED, "gzip")
    print("gzip, %d more: %s" % (REQUESTS_COMPRESSED, describe(first, second, figures)))
    third, figures = every_route(orthanc, REQUESTS_COMPRESSED, "gzip")
    print("gzip, %d more: %s" % (REQUESTS_COMPRESSED, describe(second, third, figures)))
    assert third - max(first, second) <= ALLOWED_GROWTH_KB, describe(max(first, second), third, figures)
