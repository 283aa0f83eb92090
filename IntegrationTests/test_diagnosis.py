"""GET /perf/diagnosis on a real Orthanc: the answer's shape, its arguments, and the two cases every
site meets first: a default storescu association (the C-STORE answer stall) and a healthy HTTP
ingest (nothing stands out). Each rule on the bottleneck it names, and against every other
scenario, is in test_diagnosis_scenarios.py; the rules' thresholds are unit-tested on synthetic
figures (UnitTests/Diagnosis/*RulesTests.cpp)."""
import os
import subprocess
import sys

import pytest
from ingest_perf.clients import http_upload
from ingest_perf.orthanc_process import ALL_ORTHANCS
from ingest_perf.stats_checks import without_findings_of_a_busy_machine

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0
AHEAD_OF_OTHER_WORK = True  # "nothing else is slow" needs Orthancs in memory, ahead of other work (conftest.py)

RULES = ["dicom-workers-saturated", "cstore-answer-stall", "sender-stall", "received-instance-callback", "slow-sender", "http-threads-saturated",
         "waiting-for-cpu", "transcoding-bound", "site-callbacks", "cstore-filters", "storage-bound", "index-bound",
         "slow-change-consumer", "slow-filters", "lua-lock", "slow-uploads", "slow-http-client", "compressed-answers",
         "rejected-or-duplicate", "stores-failing", "unreadable-instances"]


def diagnosis(orthanc, **params):
    answer = orthanc.get("/perf/diagnosis", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_default_storescu_association_is_diagnosed_as_the_answer_stall(orthanc, series_factory):
    orthanc.storescu(series_factory(30, 41, size=64))
    answer = diagnosis(orthanc)
    assert answer["window"] == "5m"
    assert [rule["id"] for rule in answer["rules"]] == RULES
    _, findings = without_findings_of_a_busy_machine(answer, [], "cstore-answer-stall")
    top = findings[0]
    assert top["id"] == "cstore-answer-stall", answer["rules"]
    if top is answer["findings"][0]:  # else a finding of the busy machine costs more, and is the verdict
        assert answer["verdict"] == top["verdict"]
    assert top["transport"] == "dicom" and top["cost"] == "measured" and top["confidence"] in ("high", "medium")
    # The operator's environment, not a key of Orthanc's configuration: a plugin does not write it.
    assert "configuration" not in top["fix"], top["fix"]
    assert top["fix"]["action"].startswith(
        "Start Orthanc with TCP_NODELAY=1 in its environment (systemd: Environment=TCP_NODELAY=1 in a drop-in; "
        "docker: -e TCP_NODELAY=1"), top["fix"]
    stats = orthanc.stats(transport="dicom", window="5m")["transports"]["dicom"]["phases"]
    # the finding's figures are the window's
    assert top["evidence"]["associationGap"]["count"] == stats["associationGap"]["count"] == 29
    assert top["costMsPerInstance"] == pytest.approx(stats["associationGap"]["mean"], abs=0.001)
    # 4 KB instances: the sender's own dataset stalls too, two delayed-ACK timers a gap (about 86 ms)
    assert top["evidence"]["gapsAtOneDelayedAck"] + top["evidence"]["gapsAtTwoDelayedAcks"] >= 0.5
    assert answer["summary"]["dicom"]["stored"] == 30
    # the only finding: nothing else is slow in this ingest (but the machine, busy with other tests)
    _, findings = without_findings_of_a_busy_machine(answer, [], "cstore-answer-stall")
    assert [f["id"] for f in findings] == ["cstore-answer-stall"]


def test_a_healthy_http_ingest_has_nothing_that_stands_out(orthanc, series_factory):
    http_upload(orthanc.url, series_factory(20, 42, size=64), accept_encoding="identity")
    answer = diagnosis(orthanc)
    fired, findings = without_findings_of_a_busy_machine(answer, [r["id"] for r in answer["rules"] if r["fired"]], None)
    assert findings == [] and fired == [], answer["findings"]
    if not answer["findings"]:
        assert answer["verdict"].startswith("Nothing stands out: rest: 20 stored")
    # a rule that had too little to judge says so
    stall = next(rule for rule in answer["rules"] if rule["id"] == "cstore-answer-stall")
    assert stall["reason"].startswith("not judged")


def test_nothing_stored_nothing_to_diagnose(orthanc):
    answer = diagnosis(orthanc)
    assert answer["findings"] == []
    assert answer["verdict"].startswith("Nothing to diagnose")


def test_label_filters_are_diagnosed_since_the_reset(orthanc, series_factory):
    orthanc.storescu(series_factory(12, 43, size=64))
    answer = diagnosis(orthanc, remoteAet="STORESCU")
    assert answer["window"] == "sinceReset"
    assert answer["summary"]["dicom"]["stored"] == 12
    assert diagnosis(orthanc, remoteAet="NOBODY")["summary"] == {}


@pytest.mark.parametrize("params, parameter", [
    ({"groupBy": "remoteAet"}, "groupBy"),
    ({"window": "2m"}, "window"),
    ({"window": "5m", "remoteAet": "STORESCU"}, "window"),
    ({"transport": "smtp"}, "transport"),
    ({"verbose": "1"}, "verbose"),
])
def test_bad_arguments_are_refused_with_a_reason(orthanc, params, parameter):
    answer = orthanc.get("/perf/diagnosis", params=params)
    assert answer.status_code == 400
    assert answer.json()["parameter"] == parameter


def test_only_get(orthanc):
    assert orthanc.post("/perf/diagnosis", data=b"").status_code == 405


def test_perf_report_prints_the_diagnosis_first(orthanc, series_factory, repo_root):
    orthanc.storescu(series_factory(15, 44, size=64))
    script = os.path.join(repo_root, "Resources", "perf_report.py")
    run = subprocess.run([sys.executable, script, "--url", orthanc.url, "--width", "100"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("Diagnosis (last 5m, ")
    top = diagnosis(orthanc)["findings"][0]
    assert lines[1].startswith("  1. [dicom] " + top["verdict"][:40])
    assert any(line.strip().startswith("fix: Start Orthanc with TCP_NODELAY=1 in its environment")
               for line in lines[1:8])
    assert any(line.startswith("ingest-perf ") for line in lines)  # then the statistics

    run = subprocess.run([sys.executable, script, "--url", orthanc.url, "--no-diagnosis"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.startswith("ingest-perf "), run.stdout[:200]
