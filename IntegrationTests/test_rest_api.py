"""REST errors: a bad parameter is a 400 with a JSON reason, a wrong method a 405. GET /perf/vocabulary:
every route answers its method and only it, every phase has its line in docs/phases.md and every
route its section in docs/rest-api.md."""
import os
import re

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    vocabulary = orthanc.get("/perf/vocabulary").json()
    names = [phase["name"] for phase in vocabulary["phases"]]
    assert set(stats["definitions"]["phases"]) == set(names) and stats["definitions"]["order"]["phases"] == names
    for phase in vocabulary["phases"]:  # the same definitions, by name
        assert stats["definitions"]["phases"][phase["name"]] == {k: v for k, v in phase.items() if k != "name"}
    # every phase of every transport, measured or said unobservable
    for transport in vocabulary["transports"]:
        assert set(stats["transports"][transport["name"]]["phases"]) == set(names)


def test_the_vocabulary_names_every_route_and_each_answers_its_method_only(orthanc):
    answer = orthanc.get("/perf/vocabulary")
    assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("application/json")
    vocabulary = answer.json()
    assert {route["path"] for route in vocabulary["routes"]} >= {"/perf/stats", "/perf/vocabulary", "/perf/reset"}
    for route in vocabulary["routes"]:
        path = route["path"].replace("{file}", "index.html")
        assert orthanc._request(route["method"], path).status_code == 200, route
        for other in {"GET", "POST", "PUT", "DELETE"} - {route["method"]}:
            refused = orthanc._request(other, path)
            assert (refused.status_code, refused.headers.get("Allow")) == (405, route["method"]), (other, route)
    refused = orthanc.get("/perf/vocabulary?phase=receive")
    assert refused.status_code == 400 and refused.json()["parameter"] == "phase"


def test_the_vocabulary_is_the_one_in_the_docs(orthanc):
    vocabulary = orthanc.get("/perf/vocabulary").json()
    with open(os.path.join(REPO_ROOT, "docs", "phases.md"), encoding="utf-8") as text:
        documented = re.findall(r"^\| `(\w+)` \|", text.read().split("\n## Phases\n", 1)[1].split("\n## ", 1)[0], re.M)
    assert documented == [phase["name"] for phase in vocabulary["phases"]]
    with open(os.path.join(REPO_ROOT, "docs", "rest-api.md"), encoding="utf-8") as text:
        reference = text.read()
    for route in vocabulary["routes"]:
        assert "%s %s" % (route["method"], route["path"]) in reference, route
    for name in ("transports", "outcomes", "failureReasons", "labels"):
        assert all(item["definition"] for item in vocabulary[name]), name
    phases = {phase["name"]: phase for phase in vocabulary["phases"]}
    for phase in phases.values():  # every parent is the instance or inside it
        assert (phase["parent"] is None) == (phase["place"] != "inside"), phase
        assert phase["parent"] is None or phases[phase["parent"]]["place"] in ("instance", "inside"), phase
