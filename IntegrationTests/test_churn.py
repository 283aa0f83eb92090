"""Attached for days (issue 34), in a few minutes: a site's churn of senders against the plugin's
bounded tables. More calling AETs than MaxPeers, each with an association of its own: every
association is counted once, the senders of the last minutes are named, the others in one
"(aged out)" row, nothing is skipped in silence, and POST /perf/reset empties that row. (The
duplicate race is test_ingest.py's, the alerts' severity test_prometheus_alerts.py's and promtool's.)"""
from ingest_perf.orthanc_process import BOTH_ORTHANCS
from ingest_perf.stats_checks import stored, wait_for

ORTHANC_VERSIONS = BOTH_ORTHANCS


def associations(orthanc):
    return orthanc.stats()["associations"]["byRemoteAet"]


def test_calling_aets_beyond_max_peers_age_out_and_every_association_is_counted(orthanc_factory, series_factory):
    orthanc = orthanc_factory(ingest_perf={"MaxPeers": 4, "MaxLabelValues": 32})
    files = series_factory(24, 207, size=64)
    senders = ["CHURN%02d" % i for i in range(12)]
    for i, aet in enumerate(senders):
        orthanc.storescu(files[2 * i:2 * i + 2], calling_aet=aet)  # one association of two instances each
    wait_for(orthanc, lambda s: stored(s, "dicom") == 24)
    rows = wait_for(orthanc, lambda s: sum(r["finished"] for r in s["associations"]["byRemoteAet"]) == 12,
                    timeout=20)["associations"]["byRemoteAet"]
    assert sum(r["finished"] + r["inProgress"] for r in rows) == 12, rows
    aged = [r for r in rows if r["remoteAet"] == "(aged out)"]
    named = [r["remoteAet"] for r in rows if r["remoteAet"] != "(aged out)"]
    assert len(aged) == 1 and aged[0]["distinctAets"] + len(named) == 12, rows
    assert aged[0]["instancesPerAssociation"]["max"] == 2, aged[0]
    assert set(named) <= set(senders[-6:]), named  # the latest senders keep their rows
    assert senders[-1] in named, named
    assert orthanc.stats()["errors"]["associationTrackingSkipped"] == 0

    orthanc.reset_stats()
    assert not [r for r in associations(orthanc) if r["remoteAet"] == "(aged out)"]
    orthanc.storescu(files[:2], calling_aet="AFTER")
    rows = wait_for(orthanc, lambda s: any(r["remoteAet"] == "AFTER" and r["finished"] == 1
                                           for r in s["associations"]["byRemoteAet"]), timeout=20)
    assert sum(r["finished"] for r in rows["associations"]["byRemoteAet"]) == 1, rows["associations"]


def senders(orthanc):
    answer = orthanc.stats(transport="dicom", groupBy="remoteAet")
    return {g["labels"]["remoteAet"]: g["instances"]["stored"] for g in answer["groups"]}


def test_a_reset_empties_the_label_tables_and_the_senders_after_it_are_named(orthanc_factory, series_factory):
    """Label values and label sets once full stayed taken across the reset: afterwards every C-STORE
    instance went to "(other)" until a restart. Now the reset forgets them."""
    orthanc = orthanc_factory(ingest_perf={"MaxLabelValues": 4, "MaxStreams": 8})
    files = series_factory(26, 208, size=64)
    for i in range(10):
        orthanc.storescu(files[2 * i:2 * i + 2], calling_aet="BEFORE%d" % i)
    wait_for(orthanc, lambda s: stored(s, "dicom") == 20)
    before = senders(orthanc)
    assert before.get("(other)", 0) >= 12 and sum(before.values()) == 20, before
    orthanc.reset_stats()
    assert senders(orthanc) == {}, senders(orthanc)
    labels = orthanc.stats()["labels"]
    assert labels["streams"]["used"] == 0, labels["streams"]
    for i in range(3):
        orthanc.storescu(files[20 + 2 * i:22 + 2 * i], calling_aet="AFTER%d" % i)
    after = wait_for(orthanc, lambda s: stored(s, "dicom") == 6)
    assert senders(orthanc) == {"AFTER0": 2, "AFTER1": 2, "AFTER2": 2}, senders(orthanc)
    rows = {r["remoteAet"]: r for r in wait_for(orthanc, lambda s: sum(
        r["finished"] for r in s["associations"]["byRemoteAet"]) == 3, timeout=20)["associations"]["byRemoteAet"]}
    assert set(rows) == {"AFTER0", "AFTER1", "AFTER2"}, rows
