"""Answers of HTTP ingest: whether the client accepted compression and whether Orthanc compresses
them, always; the time to compress and send them, with the opt-in TimeRestAnswers."""
import requests

from stats_checks import check_phase_invariants


def upload(orthanc, files, accept_encoding):
    session = requests.Session()
    session.headers["Accept-Encoding"] = accept_encoding
    encodings = []
    for path in files:
        answer = session.post(orthanc.url + "/instances", data=open(path, "rb").read())
        assert answer.status_code == 200
        encodings.append(answer.headers.get("Content-Encoding"))
    return encodings


def test_accepting_and_refusing_clients_are_counted(orthanc, series):
    assert upload(orthanc, series[:3], "gzip, deflate") == ["gzip"] * 3
    assert upload(orthanc, series[3:5], "identity") == [None] * 2
    assert upload(orthanc, series[5:6], "gzip;q=1.0") == [None]  # not a token Orthanc 1.10.1 accepts
    rest = orthanc.stats(transport="rest")["transports"]["rest"]
    assert rest["httpAnswers"] == {"requests": 6, "clientAcceptsCompression": 3, "compressedByOrthanc": 3,
                                   "HttpCompressionEnabled": True}
    send = rest["phases"]["responseSend"]
    assert send["observable"] is False and "TimeRestAnswers" in send["reason"]
    assert "responseCompressionAndSend" in {item["what"] for item in orthanc.stats()["unobservable"]}


def test_compression_switched_off_in_orthanc(orthanc_factory, series):
    orthanc = orthanc_factory(extra_config={"HttpCompressionEnabled": False})
    assert upload(orthanc, series[:2], "gzip") == [None] * 2
    answers = orthanc.stats(transport="rest")["transports"]["rest"]["httpAnswers"]
    assert answers == {"requests": 2, "clientAcceptsCompression": 2, "compressedByOrthanc": 0,
                       "HttpCompressionEnabled": False}


def test_time_rest_answers_times_compression_and_send(orthanc_factory, series):
    orthanc = orthanc_factory(ingest_perf={"TimeRestAnswers": True})
    assert upload(orthanc, series[:3], "gzip") == ["gzip"] * 3
    assert upload(orthanc, series[3:6], "identity") == [None] * 3
    assert orthanc.post("/instances", data=b"not DICOM").status_code == 400  # errors pass through

    stats = orthanc.stats()
    rest = stats["transports"]["rest"]
    assert rest["instances"]["stored"] == 6  # still the REST client's instances
    assert stats["transports"]["plugin"]["instances"]["stored"] == 0
    send = rest["phases"]["responseSend"]
    assert send["count"] == 6 and send["min"] > 0
    check_phase_invariants(rest, "rest")
    assert rest["httpAnswers"]["clientAcceptsCompression"] == 3
    assert "responseCompressionAndSend" not in {item["what"] for item in stats["unobservable"]}
    # The documented trade-off: Orthanc sees the plugin as the origin.
    instance = orthanc.get("/instances").json()[0]
    assert orthanc.get("/instances/%s/metadata/Origin" % instance).text == "Plugins"
    # The rest of the route still works through the plugin.
    assert len(orthanc.get("/instances", params={"since": 0, "limit": 2}).json()) == 2
    assert orthanc.delete("/instances").status_code == 405
    by_transport = {g["labels"]["transport"]: g for g in orthanc.stats(groupBy="transport")["groups"]}
    assert by_transport["rest"]["phases"]["responseSend"]["count"] == 6
