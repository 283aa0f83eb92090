"""Every rule of GET /perf/diagnosis on the bottleneck it names, and on no other: each case runs one
scenario of bottleneck_scenarios.py on a real Orthanc (a slow sender, one DICOM worker for 8
associations, ingest transcoding, a slow disk, a slow PostgreSQL index, a slow Lua filter...), checks
first that the scenario created its bottleneck (the figure it should move in /perf/stats: a scenario
that stops doing so fails here by name, not as a rule that seems wrong), then that the diagnosis's
top finding is the scenario's rule and that no other rule fired. Every case writes its row of the
confusion table (scenario x top finding, every rule that fired) to build/diagnosis-scenarios/, and the
module prints the table at its end; docs/diagnosis.md holds one.

Orthanc 1.10.1 runs every case; 1.12.7 and 1.13.0 the ones where the Orthancs differ or that every
site meets (the stall on either side, the pools, compressed answers, which they never compress, lost
instances, the site's own code, and a healthy ingest); INGEST_PERF_EVERY_SCENARIO_ON="1.13.0" runs
every case there too.

The sender's own stall is bimodal (most gaps short, some at the delayed-ACK timer): the same sender
must get the same verdict every time, which the last test checks over 5 associations.

A scenario is its bottleneck and nothing else only if the machine's other work does not add one:
the module runs its Orthancs and clients ahead of other work, their storage in memory
(AHEAD_OF_OTHER_WORK, conftest.py).
"""
import json
import os
import re

import pytest
import requests

from ingest_perf import bottleneck_scenarios as scenarios
from ingest_perf.stats_checks import without_findings_of_a_busy_machine
from ingest_perf.orthanc_process import DEBIAN13_ORTHANC, DEBIAN_SID_ORTHANC, HOST_ORTHANC, REPO_ROOT
from ingest_perf.postgresql_server import PostgreSQLServer

RESULTS = os.path.join(REPO_ROOT, "build", "diagnosis-scenarios")
AHEAD_OF_OTHER_WORK = True  # its Orthancs in memory, ahead of the machine's other work (conftest.py)


def phases(stats, transport):
    return stats["transports"][transport]["phases"]


def p50(stats, transport, phase):
    return phases(stats, transport)[phase]["p50"]


def p90(stats, transport, phase):
    return phases(stats, transport)[phase]["p90"]


def diagnosis_now(orthanc):
    """GET /perf/diagnosis on a connection of its own, as an operator's browser would."""
    answer = requests.get(orthanc.url + "/perf/diagnosis", timeout=600)
    assert answer.status_code == 200, answer.text
    return answer.json()


def during_the_load(orthanc):
    """What an operator reads during the load: the statistics, then the diagnosis."""
    stats = requests.get(orthanc.url + "/perf/stats", timeout=600).json()
    return {"stats": stats, "diagnosis": diagnosis_now(orthanc)}


def without_gaps_across_failed_stores(answer, fired):
    """The rules fired, but sender-stall where no more gaps reached the delayed-ACK timer than stores
    failed: the gap before the instance that follows a failed store spans that store, and on a loaded
    machine a store takes 20-50 ms, which puts the gap in the timer's band."""
    findings = {f["id"]: f["evidence"] for f in answer["findings"]}
    failed = findings.get("stores-failing", {}).get("failed", 0) + \
        findings.get("unreadable-instances", {}).get("failedBeforeFilters", 0)
    if "sender-stall" in findings and failed and findings["sender-stall"]["gapsAtDelayedAckTimer"] <= failed:
        print("sender-stall set aside: %d gaps at the timer, %d failed stores"
              % (findings["sender-stall"]["gapsAtDelayedAckTimer"], failed))
        return [rule for rule in fired if rule != "sender-stall"]
    return fired


def sender_stalled_too_rarely(answer):
    """Whether sender-stall did not judge for want of gaps at the timer: fewer than its minimum of 3."""
    reason = next(rule["reason"] for rule in answer["rules"] if rule["id"] == "sender-stall")
    found = re.match(r"(\d+) gaps of \d+ at the delayed-ACK timer", reason)
    return found is not None and int(found.group(1)) < 3


# --- the premises: what each scenario must show in /perf/stats ------------------------------------

def nagle_premise(orthanc, stats):
    assert 30 <= p50(stats, "dicom", "associationGap") <= 100
    assert p50(stats, "dicom", "serverTotal") < 20


def sender_stall_premise(orthanc, stats):
    # Orthanc's side fixed, yet some gaps hold the timer (bimodal: the median may be short or long, and
    # some senders stall on a few gaps only: p99, not p90)
    assert stats["dicomTcpNoDelay"]["inEffect"] is True
    assert phases(stats, "dicom")["associationGap"]["p99"] >= 30
    assert p50(stats, "dicom", "serverTotal") < 20


def sender_fixed_premise(orthanc, stats):
    assert stats["dicomTcpNoDelay"]["inEffect"] is True
    assert p90(stats, "dicom", "associationGap") < 30


def failing_premise(orthanc, stats):
    dicom, rest = stats["transports"]["dicom"]["instances"], stats["transports"]["rest"]["instances"]
    variant = orthanc.scenario["variant"]
    assert stats["openRecords"]["count"] == 0
    assert dicom["stored"] + dicom["failed"] == orthanc.scenario["sent"]["storescu"]
    reasons = dicom["failureReasons"]
    if variant == "disk-full":
        assert dicom["failed"] >= 3 and rest["failed"] == 4
        assert reasons["diskFull"] + reasons["afterFilters"] == dicom["failed"]
    elif variant == "quota":
        assert dicom["failed"] >= 10 and reasons["quota"] + reasons["afterFilters"] == dicom["failed"]
    else:
        assert dicom["failed"] == reasons["beforeFilters"] == orthanc.scenario["sent"]["storescu"] // 3


def slow_sender_premise(orthanc, stats):
    assert p50(stats, "dicom", "associationGap") >= 150
    assert p50(stats, "dicom", "serverTotal") < 30


def pool_premise(orthanc, stats):
    during = orthanc.scenario["during"]["stats"]
    assert during["associations"]["openConnections"]["count"] == 8, during["associations"]
    dicom = phases(stats, "dicom")
    assert dicom["associationGap"]["p50"] > 3 * dicom["serverTotal"]["p50"]


def http_pool_premise(orthanc, stats):
    # a reader waits for a thread: CivetWeb holds one per keep-alive connection
    assert orthanc.scenario["duringSeconds"] > 0.05, orthanc.scenario


def transcoding_premise(orthanc, stats):
    rest = phases(stats, "rest")
    assert rest["preStore"]["p50"] > 5
    if orthanc.scenario["variant"] == "off":
        assert rest["transcode"]["observable"] is False
    else:
        assert rest["transcode"]["p50"] > 5


def storage_premise(orthanc, stats):
    rest = phases(stats, "rest")
    variant = orthanc.scenario["variant"]
    if variant == "slow-disk":
        assert rest["storageWrite"]["p50"] >= 25
    elif variant == "compression":
        assert rest["storagePrepare"]["p50"] > 5 * max(rest["storageWrite"]["p50"], rest["indexUpdate"]["p50"])
    else:
        assert rest["persist"]["p50"] >= 25
        assert rest["storageWrite"]["observable"] is False
        assert bool(stats["notInEffect"]) == (variant == "storage-plugin")


def index_premise(orthanc, stats):
    assert p50(stats, "rest", "indexUpdate") >= 15


def change_premise(orthanc, stats):
    assert stats["changes"]["newInstanceBacklog"] >= 20


def filter_premise(orthanc, stats):
    assert p50(stats, "rest", "preStore") >= 20


def upload_premise(orthanc, stats):
    assert p50(stats, "rest", "receive") >= 60


def compressed_premise(orthanc, stats):
    answers = stats["transports"]["rest"]["httpAnswers"]
    compressed = orthanc.version == HOST_ORTHANC  # from 1.12.2, an answer this small never is
    assert answers["compressedByOrthanc"] == (answers["requests"] if compressed else 0)
    assert ("gzip" in orthanc.scenario["answerEncodings"]) == compressed


def duplicates_premise(orthanc, stats):
    instances = stats["transports"]["rest"]["instances"]
    assert instances["alreadyStored"] >= 10 and instances["notDicom"] >= 4


def healthy_premise(orthanc, stats):
    assert p50(stats, "dicom", "associationGap") < 20
    assert p50(stats, "rest", "serverTotal") < 30
    # the HTTP client's requests follow each other on one connection, with no wait of its own
    assert phases(stats, "rest")["requestGap"]["count"] >= orthanc.scenario["sent"]["http"] - 1


def site_code_premise(orthanc, stats):
    variant, delay = orthanc.scenario["variant"], orthanc.scenario["delayMs"]
    if variant == "python-onstored-after":  # timed between this plugin's two OnStored callbacks
        assert stats["hooks"]["otherPlugins"]["loadedAfter"] == ["libOrthancPython.so"]
        for transport in ("rest", "dicom"):
            assert p50(stats, transport, "otherOnStored") >= 0.8 * delay
    elif variant == "python-onstored-before":  # in persist, after the index commit
        assert stats["hooks"]["otherPlugins"]["loadedBefore"] == ["libOrthancPython.so"]
        assert phases(stats, "rest")["otherOnStored"]["observable"] is False
        for transport in ("rest", "dicom"):
            assert p50(stats, transport, "onStoredWait") >= 0.8 * delay
    elif variant == "python-cstore-filter":  # C-STORE only, in persist
        assert p50(stats, "dicom", "persist") - p50(stats, "rest", "persist") >= 0.8 * delay
    elif variant == "python-received":  # the script holds the ReceivedInstanceCallback: in receive and the gap
        assert stats["hooks"]["receivedInstance"]["state"] == "left"
        assert p50(stats, "rest", "receive") >= 0.8 * delay
        assert p50(stats, "dicom", "associationGap") >= 0.8 * delay
    elif variant == "python-onchange":  # orthanc-python's own queue: the store does not wait
        assert p50(stats, "rest", "serverTotal") < delay and p50(stats, "dicom", "associationGap") < delay
    elif variant == "python-cstore-refusing":  # every C-STORE instance refused, with its calling AET
        dicom = stats["transports"]["dicom"]["instances"]
        assert dicom["stored"] == 0
        assert dicom["failed"] == dicom["failureReasons"]["afterFilters"] == orthanc.scenario["sent"]["storescu"]
    else:  # Lua's OnStoredInstance holds the lock every HTTP request's filter waits for
        assert p50(stats, "rest", "receive") >= 0.5 * delay
        assert p50(stats, "dicom", "serverTotal") < delay


def cpu_starved_premise(orthanc, stats):
    assert phases(stats, "rest")["serverTotal"]["parts"]["waitingForCpu"]["share"] >= 0.3


def slow_http_client_premise(orthanc, stats):
    gap = phases(stats, "rest")["requestGap"]
    assert gap["count"] == orthanc.scenario["sent"]["http"] - 1  # every request but the first: one connection
    assert gap["p50"] >= orthanc.scenario["pauseMs"]


# Where the scenario's time goes, from the split of its phases: (transport, phase, part, its least share
# of the phase's time, a text the verdict says). Every instance is split (bottleneck_scenarios.PARTS_SAMPLING).
PARTS = {
    "nagle_stall": ("dicom", "associationGap", "blocked", 0.8, None),
    "cpu_starved": ("rest", "serverTotal", "waitingForCpu", 0.3, "Waiting for a CPU"),
    "slow_http_client": ("rest", "requestGap", "blocked", 0.6, "client waits"),
    "transcoding_bound-Off": ("rest", "preStore", "onCpu", 0.6, "on a CPU"),
    "transcoding_bound-FallThrough": ("rest", "transcode", "onCpu", 0.6, "on a CPU"),
    "storage_bound-slow-disk": ("rest", "storageWrite", "blocked", 0.6, "blocked (the disk"),
    "storage_bound-slow-disk-untimed": ("rest", "persist", "blocked", 0.5, "Blocked in persist"),
    "storage_bound-storage-plugin": ("rest", "persist", "blocked", 0.5, "Blocked in persist"),
    "storage_bound-compression": ("rest", "storagePrepare", "onCpu", 0.6, "on a CPU"),
    "index_bound-postgresql-slow": ("rest", "indexUpdate", "blocked", 0.5, "blocked (the database server"),
    "slow_filter": ("rest", "preStore", "onCpu", 0.6, None),
    "slow_upload": ("rest", "receive", "blocked", 0.6, None),
    "site_code-python-onstored-after": ("rest", "otherOnStored", "blocked", 0.8, None),
}


# What the top finding's verdict names of the site's code.
NAMED = {
    "site_code-python-onstored-after": ("OnStoredInstance", "libOrthancPython.so", "loaded after this plugin"),
    "site_code-python-onstored-before": ("OnStoredInstance", "libOrthancPython.so", "loaded before this plugin"),
    "site_code-python-cstore-filter": ("C-STORE filters", "IncomingCStoreInstanceFilter"),
    "site_code-python-cstore-refusing": ("Refused by the site's C-STORE filter", "IncomingCStoreInstanceFilter",
                                         "calling AET STORESCU"),
    "site_code-python-received": ("ReceivedInstanceCallback",),
    "site_code-lua-onstored": ("Lua lock", "OnStoredInstance"),
}


# (case, scenario, its options, premise, the rule expected on 1.10.1, on 1.12.7 if it runs there)
CASES = [
    ("nagle_stall", "nagle_stall", {"instances": 40}, nagle_premise, "cstore-answer-stall", "cstore-answer-stall"),
    # 128x128 slices: every storescu dataset stalls at the timer (99 gaps of 99 on both Orthancs, 4 runs each);
    # at 512x512 from 1% of the gaps (a CI run: the premise failed) to 38% from one run to the next.
    ("sender_stall-storescu", "sender_stall", {"sender": "storescu", "instances": 100, "size": 128},
     sender_stall_premise,
     "sender-stall", "sender-stall"),
    # 120 instances: a second Orthanc stalls on a few gaps of 59 only (the rule wants 3; in the full test
    # command of 2026-11-29, 2 or fewer on both attempts on 1.10.1, and once in 5 runs on 1.13.0).
    ("sender_stall-orthanc", "sender_stall", {"sender": "orthanc", "instances": 120}, sender_stall_premise,
     "sender-stall", None),
    ("sender_stall-gdcmscu", "sender_stall", {"sender": "gdcmscu", "instances": 60}, sender_stall_premise,
     "sender-stall", None),
    ("sender_stall-pynetdicom", "sender_stall", {"sender": "pynetdicom", "instances": 60}, sender_stall_premise,
     "sender-stall", None),
    ("sender_stall-orthanc-nodelay", "sender_stall", {"sender": "orthanc", "instances": 60, "sender_nodelay": True},
     sender_fixed_premise, None, None),
    ("slow_sender", "slow_sender", {"instances": 15}, slow_sender_premise, "slow-sender", None),
    # 100 instances per association: 1.13.0 stores 40 per association of 8 in about 1.6 s on one DICOM
    # thread, within the plugin's once-a-second reading of the connections (4 of 8 seen, 5 runs of 5).
    ("dicom_pool_saturated", "dicom_pool_saturated", {"during": during_the_load, "per_association": 100},
     pool_premise, "dicom-workers-saturated", "dicom-workers-saturated"),
    # 300 each: a load of 3-4 s, over which the plugin's samples (once a second) see the queue; with 100
    # each (1.2 s here) a sample fell outside it once in a few runs, and the reader, served once one
    # client was left, saw none.
    ("http_threads_saturated", "http_threads_saturated", {"threads": 2, "clients": 8, "per_client": 300,
                                                          "during": during_the_load},
     http_pool_premise, "http-threads-saturated", "http-threads-saturated"),
    ("transcoding_bound-Off", "transcoding_bound", {"timing": "Off", "instances": 15}, transcoding_premise,
     "transcoding-bound", None),
    ("transcoding_bound-FallThrough", "transcoding_bound", {"timing": "FallThrough", "instances": 15},
     transcoding_premise, "transcoding-bound", None),
    ("storage_bound-slow-disk", "storage_bound", {"variant": "slow-disk", "instances": 15}, storage_premise,
     "storage-bound", None),
    ("storage_bound-slow-disk-untimed", "storage_bound", {"variant": "slow-disk-untimed", "instances": 15},
     storage_premise, "storage-bound", None),
    ("storage_bound-storage-plugin", "storage_bound", {"variant": "storage-plugin", "instances": 15},
     storage_premise, "storage-bound", None),
    ("storage_bound-compression", "storage_bound", {"variant": "compression", "instances": 15}, storage_premise,
     "storage-bound", None),
    ("index_bound-postgresql-slow", "index_bound", {"database": "postgresql-slow", "instances": 15},
     index_premise, "index-bound", None),
    ("slow_change_consumer", "slow_change_consumer", {}, change_premise, "slow-change-consumer", None),
    ("slow_filter", "slow_filter", {"instances": 15}, filter_premise, "slow-filters", None),
    ("slow_upload", "slow_upload", {"instances": 12}, upload_premise, "slow-uploads", None),
    ("compressed_answers", "compressed_answers", {"instances": 20}, compressed_premise, "compressed-answers", None),
    ("duplicates_and_rejects", "duplicates_and_rejects", {"instances": 12, "rejects": 4}, duplicates_premise,
     "rejected-or-duplicate", None),
    ("stores_failing-disk-full", "stores_failing", {"variant": "disk-full"}, failing_premise, "stores-failing",
     "stores-failing"),
    ("stores_failing-quota", "stores_failing", {"variant": "quota"}, failing_premise, "stores-failing",
     "stores-failing"),
    ("stores_failing-refused", "stores_failing", {"variant": "refused"}, failing_premise, "unreadable-instances",
     "unreadable-instances"),
    ("cpu_starved", "cpu_starved", {"instances": 15}, cpu_starved_premise, "waiting-for-cpu", None),
    ("slow_http_client", "slow_http_client", {"instances": 20}, slow_http_client_premise, "slow-http-client",
     "slow-http-client"),
    ("healthy", "healthy", {"instances": 20}, healthy_premise, None, None),
    ("site_code-python-onstored-after", "site_code", {"variant": "python-onstored-after", "instances": 15},
     site_code_premise, "site-callbacks", "site-callbacks"),
    ("site_code-python-onstored-before", "site_code", {"variant": "python-onstored-before", "instances": 15},
     site_code_premise, "site-callbacks", "site-callbacks"),
    ("site_code-python-cstore-filter", "site_code", {"variant": "python-cstore-filter", "instances": 15},
     site_code_premise, "cstore-filters", "cstore-filters"),
    ("site_code-python-cstore-refusing", "site_code", {"variant": "python-cstore-refusing", "instances": 15},
     site_code_premise, "stores-failing", "stores-failing"),
    ("site_code-python-received", "site_code", {"variant": "python-received", "instances": 15}, site_code_premise,
     "received-instance-callback", "received-instance-callback"),
    ("site_code-python-onchange", "site_code", {"variant": "python-onchange", "instances": 15}, site_code_premise,
     None, None),
    ("site_code-lua-onstored", "site_code", {"variant": "lua-onstored", "instances": 15}, site_code_premise,
     "lua-lock", "lua-lock"),
]
# Run on 1.12.7 and 1.13.0 too (ON_BOTH: the 1.10.1 and newer rows of the table).
ON_BOTH = {"nagle_stall", "sender_stall-storescu", "dicom_pool_saturated", "http_threads_saturated",
           "compressed_answers", "stores_failing-disk-full", "stores_failing-quota", "stores_failing-refused",
           "slow_http_client", "healthy", "site_code-python-onstored-after", "site_code-python-onstored-before",
           "site_code-python-cstore-filter", "site_code-python-cstore-refusing", "site_code-python-received",
           "site_code-python-onchange", "site_code-lua-onstored"}


# INGEST_PERF_EVERY_SCENARIO_ON="1.13.0" (or "1.12.7 1.13.0"): every case on those Orthancs too, each
# expecting what it expects on 1.10.1 (the confusion table of docs/diagnosis.md per version; not in
# the test command, whose newer Orthancs run ON_BOTH).
EVERY_SCENARIO_ON = os.environ.get("INGEST_PERF_EVERY_SCENARIO_ON", "").split()


def params():
    for case in CASES:
        yield pytest.param(HOST_ORTHANC, case, id="%s-%s" % (HOST_ORTHANC, case[0]))
        for version in (DEBIAN13_ORTHANC, DEBIAN_SID_ORTHANC):
            if case[0] in ON_BOTH:
                yield pytest.param(version, case, id="%s-%s" % (version, case[0]))
            elif version in EVERY_SCENARIO_ON:
                yield pytest.param(version, case[:5] + (case[4],), id="%s-%s" % (version, case[0]))


@pytest.fixture(scope="module")
def postgresql():
    server = PostgreSQLServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def confusion():
    """Rows of the confusion table, printed (and saved) once every case of the module ran."""
    rows = []
    yield rows
    if rows:
        table = confusion_table(rows)
        os.makedirs(RESULTS, exist_ok=True)
        with open(os.path.join(RESULTS, "confusion.md"), "w") as f:
            f.write(table)
        print("\n" + table)


def confusion_table(rows):
    lines = ["| Orthanc | scenario | expected | top finding | every rule that fired |", "| --- | --- | --- | --- | --- |"]
    for row in sorted(rows, key=lambda r: (r["orthanc"], r["case"])):
        lines.append("| %s | %s | %s | %s | %s |" % (row["orthanc"], row["case"], row["expected"] or "(none)",
                                                   row["top"] or "(none)", ", ".join(row["fired"]) or "(none)"))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("orthanc_version, case", params())
def test_the_diagnosis_names_the_scenario_and_nothing_else(orthanc_version, case, orthanc_factory, series_factory,
                                                           postgresql, confusion):
    name, scenario, options, premise, expected_old, expected_new = case
    expected = expected_old if orthanc_version == HOST_ORTHANC else expected_new
    if name == "compressed_answers" and orthanc_version != HOST_ORTHANC:
        expected = None  # from 1.12.2 these answers are sent uncompressed: nothing to name
    options = dict(options)
    if scenario == "index_bound":
        options["postgresql"] = postgresql
    for attempt in (1, 2):
        orthanc = getattr(scenarios, scenario)(orthanc_factory, series_factory, **options)
        stats = orthanc.stats()
        try:
            premise(orthanc, stats)
        except AssertionError as e:
            if attempt == 2:
                raise
            # The scenario did not make its bottleneck: on a loaded machine the first storescu of
            # dicom_pool_saturated may end before the last one connects. Made once more.
            print("%s: premise not met (%s); once more" % (name, " ".join(str(e).split())[:200]))
            continue
        answer = orthanc.scenario["during"]["diagnosis"] if "during" in options else diagnosis_now(orthanc)
        hidden = expected and answer["findings"] and not without_findings_of_a_busy_machine(
            answer, [], expected)[1]
        rare = expected == "sender-stall" and sender_stalled_too_rarely(answer)
        if not (hidden or rare) or attempt == 2:
            break
        # The machine's other work took the scenario's time (every finding is the busy machine's, its
        # evidence checked), or the sender stalled on fewer gaps than the rule's minimum (its own
        # behaviour, which varies from one association to the next: 2 of 59 in a run): the scenario
        # once more, as an administrator would look again.
        print("%s: %s; once more" % (name, "the sender stalled on too few gaps" if rare else
                                     "every finding was the machine's other work"))
    fired = [rule["id"] for rule in answer["rules"] if rule["fired"]]
    top = answer["findings"][0]["id"] if answer["findings"] else None
    row = {"orthanc": orthanc_version, "case": name, "expected": expected, "top": top, "fired": fired}
    confusion.append(row)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "%s-%s.json" % (orthanc_version, name)), "w") as f:
        json.dump({"row": row, "diagnosis": answer}, f, indent=1)

    reasons = {rule["id"]: rule["reason"] for rule in answer["rules"]}
    fired = without_gaps_across_failed_stores(answer, fired)
    fired, findings = without_findings_of_a_busy_machine(answer, fired, expected)
    set_aside = len(findings) < len(answer["findings"])
    top = findings[0]["id"] if findings else None
    if name in PARTS:
        # The parts of the scenario's phase, each instance split: they add up to its mean, and the
        # scenario's cause is where its time goes.
        transport, phase, part, share, said = PARTS[name]
        parts = phases(stats, transport)[phase]["parts"]
        assert parts["sampled"] >= 5, parts
        total = sum(parts[p]["mean"] for p in ("onCpu", "waitingForCpu", "blocked") if "mean" in parts[p])
        assert total == pytest.approx(parts["mean"], abs=0.005), parts
        if part == "onCpu":
            # A CPU-bound phase runs, or is ready to: on a machine busy with other work, part of it
            # waits for a CPU (transcoding: 59% on a CPU, 41% waiting, in a run beside Orthanc's suite).
            running = parts["onCpu"]["share"] + parts["waitingForCpu"].get("share", 0)
            assert running >= share and parts["onCpu"]["share"] > parts["blocked"]["share"], (phase, parts)
        else:
            assert parts[part]["share"] >= share, (phase, parts)
        if said and expected and findings:
            verdict = findings[0]["verdict"]
            # (the larger of the two when the CPU-bound phase waited for a CPU more than it ran)
            assert said in verdict or part == "onCpu" and "waiting for a CPU" in verdict, verdict
    assert top == expected, (answer["verdict"], reasons)
    assert fired == ([expected] if expected else []), reasons
    if expected:
        finding = findings[0]
        if set_aside:
            pass  # the verdict is of the finding set aside when it costs more: the finding is checked below
        elif finding["cost"] == "unobservable":  # no verdict of its own: nothing measured stands out
            assert answer["verdict"].startswith("Nothing stands out") and finding["id"] in answer["verdict"]
        else:
            assert finding["verdict"] == answer["verdict"]
        assert finding["fix"]["action"] and finding["confidence"] in ("high", "medium", "low")
        for said in NAMED.get(name, ()):  # the site's code by Orthanc's names, never the disk or the sender
            assert said in finding["verdict"], finding["verdict"]
        assert finding["evidence"]
        if "cycleMs" in finding["evidence"]:
            # One base: the cycle is the page's bar of "Where the time goes" (the window's means), and the
            # verdict's percentage is the finding's share of it.
            window = orthanc.stats(transport="dicom", window=answer["window"])["transports"]["dicom"]["phases"]
            bar = window["serverTotal"]["mean"] + window["associationGap"]["mean"]
            assert finding["evidence"]["cycleMs"] == pytest.approx(bar, abs=0.01)
            assert "%d%% of each C-STORE cycle" % round(100 * finding["shareOfCycle"]) in finding["verdict"]
    elif not set_aside:
        assert answer["verdict"].startswith("Nothing stands out")


@pytest.mark.parametrize("sender", ["gdcmscu", "storescu"])
def test_the_same_sender_gets_the_same_verdict_every_time(sender, orthanc_factory, series_factory):
    """5 associations of 100 instances from one sender that keeps Nagle's algorithm, into an Orthanc
    whose side is fixed: the diagnosis after each (then a reset, so that each is judged alone) names
    the sender's stall, and nothing else. gdcmscu's gaps are bimodal, its median 4 ms in one run and 45
    in the next: the rule read from the mean and median named it in 3 runs of 5. The rule's shares of
    the gaps' time and of the cycle also depend on how long everything else takes: on a loaded machine
    (load 20, even ahead of other work) one association in 5 fell below them once, so all but one of
    the associations whose sender stalled on at least 3 gaps is the bar, which the old rule missed
    (it named gdcmscu in 3 of 5 that all stalled)."""
    def verdict_then_reset(orthanc):
        answer = diagnosis_now(orthanc)
        gaps = orthanc.stats(transport="dicom")["transports"]["dicom"]["phases"]["associationGap"]
        orthanc.reset_stats()
        fired, _ = without_findings_of_a_busy_machine(answer, [r["id"] for r in answer["rules"] if r["fired"]],
                                                      "sender-stall")
        return {"fired": fired, "gaps": gaps["count"],
                "p50": gaps["p50"], "reason": [r["reason"] for r in answer["rules"] if r["id"] == "sender-stall"]}

    for attempt in (1, 2):
        orthanc = scenarios.sender_stall(orthanc_factory, series_factory, sender=sender, instances=100,
                                         associations=5, after_each=verdict_then_reset)
        each = orthanc.scenario["afterEach"]
        assert [run["gaps"] for run in each] == [99] * 5, each
        verdicts = "\n".join("%s, gaps p50 %.1f ms: %s" % (run["fired"], run["p50"], run["reason"]) for run in each)
        assert all(run["fired"] in ([], ["sender-stall"]) for run in each), verdicts
        # Judged: the associations whose sender stalled on the rule's minimum of 3 gaps. How many gaps
        # stall is the sender's own (storescu in the full test command, 2026-11-29: 1, 7, 0, 4 and 3 of 99
        # in five associations): fewer than 3 judged is the scenario not made, made once more.
        judged = [run for run in each if int(re.match(r"(\d+) gaps of", run["reason"][0]).group(1)) >= 3]
        if len(judged) >= 3 or attempt == 2:
            break
        print("%s: stalled on 3 gaps or more in %d association(s) of 5; once more" % (sender, len(judged)))
    assert len(judged) >= 3, verdicts
    assert sum(run["fired"] == ["sender-stall"] for run in judged) >= len(judged) - 1, verdicts
