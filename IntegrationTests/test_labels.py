"""Labels, filters and groupBy against a real Orthanc: two modalities over C-STORE, one HTTP client."""
import pytest
from ingest_perf.orthanc_process import ALL_ORTHANCS

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0

CT_SYNTAX = "1.2.840.10008.1.2.1"
CT_CLASS = "1.2.840.10008.5.1.4.1.1.2"


@pytest.fixture
def labelled(orthanc, series_factory):
    ct = series_factory(10, 11, size=64)
    orthanc.storescu(ct[:6], calling_aet="CT01")
    orthanc.storescu(ct[6:], calling_aet="MR02")
    orthanc.http_upload(series_factory(3, 12, size=64))
    return orthanc


def test_group_by_calling_aet(labelled):
    answer = labelled.stats(transport="dicom", groupBy="remoteAet")
    groups = {g["labels"]["remoteAet"]: g for g in answer["groups"]}
    assert set(groups) == {"CT01", "MR02"}
    assert groups["CT01"]["instances"]["stored"] == 6
    assert groups["MR02"]["instances"]["stored"] == 4
    # each association's gaps stay with its AET
    assert groups["CT01"]["phases"]["associationGap"]["count"] == 5
    assert groups["MR02"]["phases"]["associationGap"]["count"] == 3
    assert answer["transports"]["dicom"]["instances"]["stored"] == 10
    assert answer["query"] == {"filters": {"transport": "dicom"}, "groupBy": "remoteAet", "window": None,
                               "streamsMatched": 2, "seriesMatched": 2}


def test_labels_of_every_dimension(labelled):
    stats = labelled.stats()
    labels = stats["labels"]
    assert sorted(labels["remoteAet"]["values"]) == ["CT01", "MR02"]
    assert labels["remoteIp"]["values"] == ["127.0.0.1"]
    assert labels["calledAet"]["values"] == ["ORTHANC"]
    assert labels["receivedSyntax"]["values"] == [CT_SYNTAX]
    assert labels["storedSyntax"]["values"] == [CT_SYNTAX]
    assert labels["sopClass"]["values"] == [CT_CLASS]
    by_size = labelled.stats(groupBy="sizeClass")
    assert [g["labels"]["sizeClass"] for g in by_size["groups"]] == ["<64KiB"]
    by_transport = {g["labels"]["transport"]: g["instances"]["stored"]
                    for g in labelled.stats(groupBy="transport")["groups"]}
    assert by_transport == {"dicom": 10, "rest": 3}


def test_filters_combine_and_none_matches_http(labelled):
    only_mr = labelled.stats(remoteAet="MR02")
    assert only_mr["transports"]["all"]["instances"]["stored"] == 4
    http = labelled.stats(remoteAet="(none)", groupBy="calledAet")
    assert [(g["labels"]["calledAet"], g["instances"]["stored"]) for g in http["groups"]] == [("(none)", 3)]
    nothing = labelled.stats(remoteAet="NEVER")
    assert nothing["query"]["streamsMatched"] == 0
    assert nothing["transports"]["all"]["instances"]["stored"] == 0


def test_label_limits_put_the_rest_in_other(orthanc_factory, series_factory):
    orthanc = orthanc_factory(ingest_perf={"MaxLabelValues": 2, "MaxStreams": 2})
    files = series_factory(8, 13, size=64)
    for index, aet in enumerate(["A1", "A2", "A3", "A4"]):
        orthanc.storescu(files[2 * index:2 * index + 2], calling_aet=aet)
    stats = orthanc.stats(groupBy="remoteAet")
    assert len(stats["labels"]["remoteAet"]["values"]) == 2
    assert stats["labels"]["remoteAet"]["overflowed"] >= 4
    assert stats["labels"]["streams"]["used"] == 2
    assert sum(g["instances"]["stored"] for g in stats["groups"]) == 8  # nothing lost
    assert "(other)" in {g["labels"]["remoteAet"] for g in stats["groups"]}
