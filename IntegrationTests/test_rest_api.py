"""REST errors: a bad parameter is a 400 with a JSON reason, a wrong method a 405."""
import pytest


@pytest.mark.parametrize("query, parameter", [
    ("transport=smtp", "transport"),
    ("transport=", "transport"),
    ("groupBy=aet", "groupBy"),
])
def test_bad_stats_parameter_is_400_with_json_reason(orthanc, query, parameter):
    answer = orthanc.get("/perf/stats?" + query)
    assert answer.status_code == 400
    body = answer.json()
    assert body["parameter"] == parameter
    assert parameter in body["error"]
    assert "allowed" in body


def test_filtering_by_transport(orthanc):
    assert list(orthanc.stats(transport="dicom")["transports"]) == ["dicom"]
    assert list(orthanc.stats(transport="all")["transports"]) == ["all"]
    assert sorted(orthanc.stats()["transports"]) == ["all", "dicom", "job", "plugin", "rest"]


def test_wrong_methods(orthanc):
    assert orthanc.post("/perf/stats").status_code == 405
    assert orthanc.get("/perf/reset").status_code == 405


def test_stats_describe_the_plugin_and_what_it_cannot_see(orthanc):
    stats = orthanc.stats()
    assert stats["plugin"] == "ingest-perf"
    assert stats["orthancVersion"]
    assert stats["hooks"]["storedInstance"]["registered"] is True
    assert stats["hooks"]["transcoder"]["registered"] is False  # no IngestTranscoding here
    assert "IngestTranscoding" in stats["hooks"]["transcoder"]["reason"]
    unobservable = {item["what"]: item for item in stats["unobservable"]}
    assert "responseCompressionAndSend" in unobservable
    assert "storageWriteVsIndexUpdate" in unobservable
    assert set(stats["definitions"]["phases"]) == {
        "receive", "preStore", "transcode", "persist", "storagePrepare", "storageWrite", "indexUpdate", "serverTotal",
        "changeDispatch", "associationGap", "responseSend"}
