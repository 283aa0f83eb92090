"""C-STORE associations per calling AET, told apart by their connection to Orthanc, and the
change queue: what a slow OnChange consumer does to every plugin."""
import os
import time

from pynetdicom import AE
from pynetdicom.sop_class import CTImageStorage
import pydicom
from ingest_perf import clients
from ingest_perf.orthanc_process import ALL_ORTHANCS
from ingest_perf.stats_checks import wait_for

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0

SHORT_TIMEOUT = {"DicomScpTimeout": 2}


def finished_associations(orthanc, expected):
    """Waits until the associations of each calling AET in `expected` are all finished."""
    def done(stats):
        peers = {p["remoteAet"]: p for p in stats["associations"]["byRemoteAet"]}
        return all(peers.get(aet, {}).get("finished") == n and peers[aet]["inProgress"] == 0
                   for aet, n in expected.items())
    stats = wait_for(orthanc, done)
    return {p["remoteAet"]: p for p in stats["associations"]["byRemoteAet"]}, stats["associations"]


def test_associations_are_told_apart_by_their_connection(orthanc_factory, series_factory):
    orthanc = orthanc_factory(extra_config=SHORT_TIMEOUT)
    files = series_factory(12, 71, size=64)
    orthanc.storescu(files[:5], calling_aet="CT01")
    orthanc.storescu(files[5:8], calling_aet="MR02")
    orthanc.storescu(files[8:10], calling_aet="CT01")  # a second association, same AET, same worker thread
    orthanc.storescu(files[10:], calling_aet="CT01")  # and a third, right after
    # storescu released its association and closed its connection: finished within the plugin's
    # next tick (a second), not after DicomScpTimeout.
    peers, associations = finished_associations(orthanc, {"CT01": 3, "MR02": 1})
    assert set(peers) == {"CT01", "MR02"}
    ct = peers["CT01"]
    # Each told apart from the next: by its connection when the plugin's thread read it while open, else
    # inferred and ended by a reading that saw its address without a connection (a 2-instance
    # association without Nagle's stall can be over within the 50 ms a reading may wait, on a busy
    # machine): either way three, none merged, and no gap between them.
    assert (ct["finished"], ct["inProgress"], ct["byConnection"] + ct["inferred"]) == (3, 0, 3), ct
    assert sorted([ct["instancesPerAssociation"]["min"], ct["instancesPerAssociation"]["max"]]) == [2, 5]
    assert ct["instancesPerAssociation"]["sum"] == 9
    assert ct["durationMs"]["count"] == 3 and ct["durationMs"]["max"] > 0
    assert ct["gap"]["count"] == 4 + 1 + 1  # within each association; the pause between them is no gap
    assert peers["MR02"]["instancesPerAssociation"]["max"] == 3
    assert peers["MR02"]["gap"]["count"] == 2
    dicom = orthanc.stats(transport="dicom")["transports"]["dicom"]["phases"]
    assert dicom["associationGap"]["count"] == 8
    assert "DicomScpTimeout (2 s)" in associations["definition"]
    assert associations["openConnections"]["count"] == 0


def test_back_to_back_gdcmscu_processes_are_one_association_each(orthanc, series_factory):
    """GDCM's gdcmscu, one process per instance from one calling AET (issue 20, case 5): one
    association each, as Orthanc's log counts them, and no associationGap between them."""
    files = series_factory(4, 72, size=64)
    # Debian 12's gdcmscu (GDCM 3.0.21) stores the instance, then aborts on its way out ("ProtocolStream as
    # nullptr is invalid", SIGABRT): its exit status says nothing; Orthanc's count below does.
    clients.gdcmscu(orthanc.dicom_port, files, "GDCMSCU", orthanc.aet, process_per_file=True, timeout=60)
    assert len(orthanc.get("/instances").json()) == 4
    peers, _ = finished_associations(orthanc, {"GDCMSCU": 4})
    gdcm = peers["GDCMSCU"]
    # One instance per association: its connection is mostly read by the plugin's thread only after
    # the instance was stored (inferred), and seen closed before the next process's first instance.
    assert (gdcm["finished"], gdcm["byConnection"] + gdcm["inferred"], gdcm["instancesPerAssociation"]["max"]) == \
        (4, 4, 1)
    assert gdcm["gap"]["count"] == 0
    dicom = orthanc.stats(transport="dicom")["transports"]["dicom"]
    assert dicom["instances"]["stored"] == 4
    assert dicom["phases"]["associationGap"]["count"] == 0


def test_open_associations_are_orthancs_own_sockets(orthanc, series):
    ae = AE(ae_title="HOLDER")
    ae.add_requested_context(CTImageStorage, "1.2.840.10008.1.2.1")
    association = ae.associate("127.0.0.1", orthanc.dicom_port, ae_title=orthanc.aet)
    assert association.is_established
    try:
        for path in series[:2]:
            status = clients.c_store(association, pydicom.dcmread(path))
            assert status.Status == 0
        open_now = orthanc.stats()["associations"]["openConnections"]
        assert open_now["count"] == 1
        assert open_now["byRemoteIp"] == {"127.0.0.1": 1}
        peers = orthanc.stats()["associations"]["byRemoteAet"]
        assert [(p["remoteAet"], p["inProgress"], p["finished"], p["byConnection"]) for p in peers] == \
            [("HOLDER", 1, 0, 1)]
    finally:
        association.release()
    # Its connection is gone: finished within a second, not "in progress" next to "0 open now".
    peers, associations = finished_associations(orthanc, {"HOLDER": 1})
    assert associations["openConnections"]["count"] == 0
    assert (peers["HOLDER"]["inProgress"], peers["HOLDER"]["finished"]) == (0, 1)
    assert peers["HOLDER"]["instancesPerAssociation"]["max"] == 2


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


def test_a_slow_change_consumer_shows_as_backlog_and_lag(orthanc_factory, plugin_path, series, tmp_path):
    """The consumer holds Orthanc's change thread at a gate until the uploads are answered, then 100 ms
    per change: the backlog and the lag are the plugin's reading of what the consumer did, whatever
    else the machine runs (without the gate, a loaded machine uploads slowly enough for the change
    thread to keep up)."""
    slow = os.path.join(os.path.dirname(plugin_path), "libTestSlowChangeConsumer.so")
    gate = tmp_path / "change-gate"
    orthanc = orthanc_factory(extra_config={"Plugins": [slow, plugin_path]},
                              env={"SLOW_CHANGE_MS": "100", "SLOW_CHANGE_GATE": str(gate)})
    orthanc.http_upload(series[:8])
    during = orthanc.stats()["changes"]
    assert during["newInstanceBacklog"] >= 7  # every change but the one held at the gate
    gate.touch()

    changes = wait_for(orthanc, lambda s: s["changes"]["newInstanceBacklog"] == 0, timeout=60)["changes"]
    assert changes["newInstanceBacklog"] == 0
    lag = changes["lagMs"]["newInstance"]
    assert lag["count"] >= 7
    assert lag["max"] >= 600  # the last one waited behind the 6 or 7 deliveries of 100 ms before it
    per_instance = changes["perInstanceWhileBackloggedMs"]
    assert per_instance["count"] >= 4
    assert per_instance["p50"] >= 90  # each instance held the change thread 100 ms
    rest = orthanc.stats(transport="rest")["transports"]["rest"]["phases"]["changeDispatch"]
    assert rest["p99"] >= 600
