"""C-STORE associations per calling AET, open associations from the kernel's TCP table, and the
change queue: what a slow OnChange consumer does to every plugin."""
import os
import time

from pynetdicom import AE
from pynetdicom.sop_class import CTImageStorage
import pydicom
from ingest_perf.orthanc_process import BOTH_ORTHANCS

ORTHANC_VERSIONS = BOTH_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1 and 1.12.7

SHORT_TIMEOUT = {"DicomScpTimeout": 2}


def test_associations_inferred_per_calling_aet(orthanc_factory, series_factory):
    orthanc = orthanc_factory(extra_config=SHORT_TIMEOUT)
    files = series_factory(8, 71, size=64)
    orthanc.storescu(files[:5], calling_aet="CT01")
    orthanc.storescu(files[5:], calling_aet="MR02")
    released = {p["remoteAet"]: p for p in orthanc.stats()["associations"]["byRemoteAet"]}
    # storescu released its association and no TCP connection is left from 127.0.0.1: closed, not
    # in progress; counted as finished once DicomScpTimeout has passed.
    assert (released["CT01"]["inProgress"], released["CT01"]["closed"], released["CT01"]["finished"]) == (0, 1, 0)

    time.sleep(2.5)  # idle for longer than DicomScpTimeout: Orthanc would have closed them
    associations = orthanc.stats()["associations"]
    peers = {p["remoteAet"]: p for p in associations["byRemoteAet"]}
    assert set(peers) == {"CT01", "MR02"}
    ct = peers["CT01"]
    assert (ct["finished"], ct["inProgress"], ct["closed"]) == (1, 0, 0)
    assert ct["instancesPerAssociation"]["max"] == 5
    assert ct["durationMs"]["count"] == 1 and ct["durationMs"]["max"] > 0
    assert ct["gap"]["count"] == 4
    assert peers["MR02"]["instancesPerAssociation"]["max"] == 3
    assert "DicomScpTimeout (2 s)" in associations["definition"]
    assert associations["openConnections"]["count"] == 0


def test_open_associations_are_read_from_the_tcp_table(orthanc, series):
    ae = AE(ae_title="HOLDER")
    ae.add_requested_context(CTImageStorage, "1.2.840.10008.1.2.1")
    association = ae.associate("127.0.0.1", orthanc.dicom_port, ae_title=orthanc.aet)
    assert association.is_established
    try:
        for path in series[:2]:
            status = association.send_c_store(pydicom.dcmread(path))
            assert status.Status == 0
        open_now = orthanc.stats()["associations"]["openConnections"]
        assert open_now["count"] == 1
        assert open_now["byRemoteIp"] == {"127.0.0.1": 1}
        peers = orthanc.stats()["associations"]["byRemoteAet"]
        assert [(p["remoteAet"], p["inProgress"], p["closed"]) for p in peers] == [("HOLDER", 1, 0)]
    finally:
        association.release()
    deadline = time.time() + 5
    while orthanc.stats()["associations"]["openConnections"]["count"] and time.time() < deadline:
        time.sleep(0.05)
    associations = orthanc.stats()["associations"]
    assert associations["openConnections"]["count"] == 0
    # Within DicomScpTimeout, but its client is gone: not "in progress" next to "0 open now".
    assert [(p["remoteAet"], p["inProgress"], p["closed"]) for p in associations["byRemoteAet"]] == [("HOLDER", 0, 1)]


def test_change_queue_counts_and_lags(orthanc, series):
    orthanc.http_upload(series[:6])
    deadline = time.time() + 10
    while orthanc.stats()["changes"]["newInstanceBacklog"] and time.time() < deadline:
        time.sleep(0.05)
    changes = orthanc.stats()["changes"]
    assert changes["delivered"]["NewInstance"] == 6
    assert changes["delivered"]["NewSeries"] == 1
    assert changes["delivered"]["NewStudy"] == 1
    assert changes["delivered"]["NewPatient"] == 1
    assert changes["newInstanceBacklog"] == 0
    lag = changes["lagMs"]
    assert lag["newInstance"]["count"] + lag["newInstance"]["deliveredBeforeOnStored"] == 6
    assert lag["newSeries"]["count"] + lag["seriesStudyPatientNotTimed"] >= 1
    assert lag["stableSeriesStudyPatient"]["observable"] is False


def test_a_slow_change_consumer_shows_as_backlog_and_lag(orthanc_factory, plugin_path, series):
    slow = os.path.join(os.path.dirname(plugin_path), "libTestSlowChangeConsumer.so")
    orthanc = orthanc_factory(extra_config={"Plugins": [slow, plugin_path]}, env={"SLOW_CHANGE_MS": "100"})
    orthanc.http_upload(series[:8])  # ~10 ms each: the changes fall behind at 100 ms each
    during = orthanc.stats()["changes"]
    assert during["newInstanceBacklog"] >= 3

    deadline = time.time() + 10
    while orthanc.stats()["changes"]["newInstanceBacklog"] and time.time() < deadline:
        time.sleep(0.1)
    changes = orthanc.stats()["changes"]
    assert changes["newInstanceBacklog"] == 0
    lag = changes["lagMs"]["newInstance"]
    assert lag["count"] >= 5
    assert lag["max"] >= 300  # the last ones waited behind several 100 ms deliveries
    per_instance = changes["perInstanceWhileBackloggedMs"]
    assert per_instance["count"] >= 4
    assert per_instance["p50"] >= 90  # each instance held the change thread 100 ms
    rest = orthanc.stats(transport="rest")["transports"]["rest"]["phases"]["changeDispatch"]
    assert rest["p99"] >= 300
