"""Instances that reach Orthanc from another Orthanc (C-STORE sent with /modalities/{id}/store) and
from Orthanc's own jobs (a study modification): each labelled with its transport and AET."""
from ingest_perf.orthanc_process import ALL_ORTHANCS

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0


def test_orthanc_to_orthanc_cstore_is_labelled_with_the_sender_aet(orthanc_factory, series_factory):
    receiver = orthanc_factory(aet="RECEIVER")
    files = series_factory(6, 91, size=64)
    sender = orthanc_factory(plugin_path=None, aet="SENDER", extra_config={
        "DicomModalities": {"receiver": ["RECEIVER", "127.0.0.1", receiver.dicom_port]}})
    sender.http_upload(files)
    study = sender.get("/studies").json()[0]
    answer = sender.post("/modalities/receiver/store", json={"Resources": [study], "Synchronous": True})
    assert answer.status_code == 200, answer.text

    stats = receiver.stats(groupBy="remoteAet")
    assert stats["transports"]["dicom"]["instances"]["stored"] == 6
    assert stats["transports"]["rest"]["instances"]["stored"] == 0
    (group,) = stats["groups"]
    assert group["labels"]["remoteAet"] == "SENDER"
    assert group["instances"]["stored"] == 6
    assert group["phases"]["associationGap"]["count"] == 5  # one association
    called = receiver.stats(groupBy="calledAet")["groups"]
    assert [(g["labels"]["calledAet"], g["instances"]["stored"]) for g in called] == [("RECEIVER", 6)]


def test_a_modification_job_is_the_job_transport(orthanc, series):
    orthanc.http_upload(series[:3])
    study = orthanc.get("/studies").json()[0]
    answer = orthanc.post("/studies/%s/modify" % study,
                          json={"Replace": {"StudyDescription": "modified"}, "Force": True})
    assert answer.status_code == 200, answer.text
    stats = orthanc.stats(groupBy="transport")
    by_transport = {g["labels"]["transport"]: g["instances"]["stored"] for g in stats["groups"]}
    assert by_transport == {"rest": 3, "job": 3}
    job = stats["transports"]["job"]
    assert job["phases"]["receive"]["observable"] is False
    assert job["phases"]["serverTotal"]["count"] == 3
