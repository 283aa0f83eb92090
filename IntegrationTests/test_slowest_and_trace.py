"""GET /perf/slowest and GET /perf/trace against a real Orthanc: the slowest recent instances with their
whole timelines, named by Orthanc IDs that exist, consistent with /perf/stats; the same instances as a
Chrome trace whose slices have exactly their phases; bad parameters answered 400."""
import json
import os
import subprocess
import sys

import pytest

from ingest_perf import perf_report
from ingest_perf.orthanc_process import ALL_ORTHANCS
from ingest_perf.stats_checks import stored, wait_for

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0



def nesting(orthanc):
    """{phase: its parent} for the phases drawn inside an instance's slice, from the vocabulary."""
    phases = orthanc.get("/perf/vocabulary").json()["phases"]
    return {phase["name"]: phase["parent"] for phase in phases if phase["place"] == "inside"}


@pytest.fixture
def ingested(orthanc, series_factory):
    files = series_factory(14, 31, size=64)
    orthanc.storescu(files[:8], calling_aet="CT01")
    orthanc.http_upload(files[8:])
    wait_for(orthanc, lambda s: stored(s, "all") == 14)
    return orthanc


def slowest(orthanc, **params):
    answer = orthanc.get("/perf/slowest", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_slowest_names_existing_instances_longest_first(ingested):
    answer = slowest(ingested, n=5, window="5m", phase="serverTotal")
    assert answer["phase"] == "serverTotal" and answer["n"] == 5 and answer["windowSeconds"] == 300
    assert answer["matched"] == 14
    ring = answer["ring"]
    assert ring["capacity"] == 4096 and ring["held"] == 14 and ring["pushed"] == 14
    assert 0 < ring["reachesBackSeconds"] < 300 and ring["oldest"].endswith("Z") and ring["coversWindow"] is True
    instances = answer["instances"]
    assert len(instances) == 5
    totals = [i["phases"]["serverTotal"] for i in instances]
    assert totals == sorted(totals, reverse=True)

    stats = ingested.stats()["transports"]["all"]["phases"]["serverTotal"]
    assert totals[0] >= stats["p50"]
    summed = [p["name"] for p in ingested.get("/perf/vocabulary").json()["phases"] if p["partOfServerTotal"]]
    for instance in instances:
        # the histogram's max is within 1% of the exact one
        assert instance["phases"]["serverTotal"] <= stats["max"] * 1.01 + 0.001
        assert ingested.get("/instances/%s" % instance["instanceId"]).status_code == 200
        assert instance["outcome"] == "stored" and instance["thread"] > 0
        assert instance["arrival"].endswith("Z") and "T" in instance["arrival"]
        assert instance["transport"] in ("rest", "dicom")
        parts = sum(instance["phases"].get(p, 0) for p in summed)
        assert parts == pytest.approx(instance["phases"]["serverTotal"], abs=0.001)


def test_slowest_filters_by_transport_label_and_phase(ingested):
    dicom = slowest(ingested, n=20, transport="dicom", phase="associationGap")
    # the first instance of the association has no gap
    assert dicom["matched"] == 7 and len(dicom["instances"]) == 7
    assert {i["labels"]["remoteAet"] for i in dicom["instances"]} == {"CT01"}
    gaps = [i["phases"]["associationGap"] for i in dicom["instances"]]
    assert gaps == sorted(gaps, reverse=True)
    ct = slowest(ingested, remoteAet="CT01", n=100)
    assert ct["matched"] == 8 and {i["transport"] for i in ct["instances"]} == {"dicom"}
    rest = slowest(ingested, transport="rest", phase="receive")
    assert rest["matched"] == 6 and all("receive" in i["phases"] for i in rest["instances"])
    assert slowest(ingested, remoteAet="NOBODY")["instances"] == []
    ingested.reset_stats()
    after = slowest(ingested)
    assert after["instances"] == [] and after["ring"]["held"] == 0


def test_trace_is_a_chrome_trace_matching_slowest(ingested):
    answer = ingested.get("/perf/trace", params={"seconds": 60})
    assert answer.status_code == 200, answer.text
    trace = answer.json()
    assert trace["displayTimeUnit"] == "ms"
    assert trace["otherData"]["instances"] == 14 and trace["otherData"]["seconds"] == 60
    events = trace["traceEvents"]
    nested = nesting(ingested)
    assert {"receive", "preStore", "persist", "transcode"} <= set(nested) and "serverTotal" not in nested
    names, last_ts, instance_slices, counters, gaps = {}, {}, {}, [], []
    enclosing, opened = None, {}
    for event in events:
        assert {"name", "ph", "pid", "tid"} <= set(event), event
        if event["ph"] == "M":
            assert event["name"] in ("process_name", "thread_name") and isinstance(event["args"]["name"], str)
            names[(event["pid"], event["tid"], event["name"])] = event["args"]["name"]
            continue
        track = (event["pid"], event["tid"])
        assert event["ts"] >= 0 and event["ts"] >= last_ts.get(track, 0), event
        last_ts[track] = event["ts"]
        if event["ph"] == "C":
            assert isinstance(event["args"]["instancesPerSecond"], int)
            counters.append(event)
            continue
        assert event["ph"] == "X" and event["dur"] >= 0 and isinstance(event["cat"], str), event
        assert (event["pid"], event["tid"], "thread_name") in names, event
        if event["pid"] == 1 and event["cat"] == "instance":
            enclosing, opened = event, {"serverTotal": event}
            instance_slices[event["args"]["instanceId"]] = event
        elif event["cat"] == "phase":
            assert event["name"] in nested
            assert enclosing is not None and enclosing["tid"] == event["tid"]
            # within its parent's slice (the instance's for the phases serverTotal is made of)
            parent = opened.get(nested[event["name"]])
            assert parent is not None, event
            assert event["ts"] >= parent["ts"] - 0.001
            assert event["ts"] + event["dur"] <= parent["ts"] + parent["dur"] + 0.001
            opened[event["name"]] = event
            enclosing.setdefault("children", {})[event["name"]] = event["dur"]
        elif event["cat"] == "associationGap":
            assert event["pid"] == 2
            gaps.append(event)
    assert names[(1, 0, "process_name")] and names[(2, 0, "process_name")]
    assert len(instance_slices) == 14 and len(gaps) == 7
    assert any(name.startswith("C-STORE from CT01") for name in names.values())
    assert len(counters) == 60 and sum(c["args"]["instancesPerSecond"] for c in counters) == 14

    # The slices' durations are the phases /perf/slowest gives for the same instances (within 1 us).
    for instance in slowest(ingested, n=14)["instances"]:
        piece = instance_slices[instance["instanceId"]]
        assert piece["tid"] == instance["thread"]
        assert piece["dur"] == pytest.approx(instance["phases"]["serverTotal"] * 1000, abs=1)
        for phase in nested:
            if phase in instance["phases"]:
                assert piece["children"][phase] == pytest.approx(instance["phases"][phase] * 1000, abs=1)
            else:
                assert phase not in piece.get("children", {})


BAD_PARAMETERS = [
    ("/perf/slowest", {"n": 0}), ("/perf/slowest", {"n": "many"}), ("/perf/slowest", {"window": "5d"}),
    ("/perf/slowest", {"phase": "nope"}), ("/perf/slowest", {"phase": "changeDispatch"}),
    ("/perf/slowest", {"groupBy": "remoteAet"}), ("/perf/slowest", {"transport": "smtp"}),
    ("/perf/slowest", {"seconds": 5}), ("/perf/trace", {"seconds": 0}), ("/perf/trace", {"seconds": 3601}),
    ("/perf/trace", {"n": 3}),
]


def test_bad_parameters_400_with_a_reason_and_other_methods_405(orthanc):
    for route, params in BAD_PARAMETERS:  # one Orthanc for all: each start costs seconds
        answer = orthanc.get(route, params=params)
        assert answer.status_code == 400, (route, params, answer.text)
        reason = answer.json()
        assert isinstance(reason["error"], str) and isinstance(reason["parameter"], str)
    for route in ("/perf/slowest", "/perf/trace"):
        assert orthanc.post(route, data=b"").status_code == 405
        assert orthanc.delete(route).status_code == 405


def test_perf_report_slowest_and_trace(ingested, repo_root, tmp_path):
    script = os.path.join(repo_root, "Resources", "perf_report.py")
    run = subprocess.run([sys.executable, script, "--url", ingested.url, "--slowest", "3"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("3 slowest by serverTotal (ms) of 14 instances stored in the last 5m")
    assert max(len(line) for line in lines) <= 80
    top = slowest(ingested, n=3)["instances"]
    words = run.stdout.replace(",", " ").split()
    assert [words[i + 1] for i, word in enumerate(words) if word == "instance"] == [i["instanceId"] for i in top]

    saved = tmp_path / "trace.json"
    run = subprocess.run([sys.executable, script, "--url", ingested.url, "--trace", str(saved), "--seconds", "120"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    trace = json.loads(saved.read_text())
    assert run.stdout.split() == ("%s: %s" % (saved, perf_report.trace_summary(trace))).split()
    assert " 14 instances, " in run.stdout and trace["otherData"]["seconds"] == 120
