"""Answers of HTTP ingest: whether the client accepted compression and whether Orthanc compresses
them, always; the time to compress and send them is unobservable: no Orthanc has a hook around it."""
import requests

from ingest_perf.clients import http_upload
from ingest_perf.orthanc_process import ALL_ORTHANCS

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0


def upload(orthanc, files, accept_encoding):
    """The Content-Encoding of each answer (None: identity)."""
    return [{"identity": None}.get(u.encoding, u.encoding)
            for u in http_upload(orthanc.url, files, accept_encoding=accept_encoding)]


def test_accepting_and_refusing_clients_are_counted(orthanc, series, orthanc_version):
    # 1.10.1 compresses every answer by default; from 1.12.2 compression is off by default, and
    # answers under 2048 bytes (every single-instance ingest answer) are never compressed.
    old = orthanc_version == "1.10.1"
    assert upload(orthanc, series[:3], "gzip, deflate") == ["gzip" if old else None] * 3
    assert upload(orthanc, series[3:5], "identity") == [None] * 2
    assert upload(orthanc, series[5:6], "gzip;q=1.0") == [None]  # not a token Orthanc 1.10.1 accepts
    rest = orthanc.stats(transport="rest")["transports"]["rest"]
    assert rest["httpAnswers"] == {"requests": 6, "clientAcceptsCompression": 3, "compressedByOrthanc": 3 if old else 0,
                                   "HttpCompressionEnabled": old, "smallestCompressedBytes": None if old else 2048}
    answer = next(item for item in orthanc.stats()["unobservable"] if item["what"] == "responseCompressionAndSend")
    assert "no Orthanc up to 1.13.0 offers a hook" in answer["reason"] and "responseSend" not in rest["phases"]


def test_compression_switched_in_orthanc(orthanc_factory, series, orthanc_version):
    old = orthanc_version == "1.10.1"
    orthanc = orthanc_factory(extra_config={"HttpCompressionEnabled": not old})
    assert upload(orthanc, series[:2], "gzip") == [None] * 2  # 1.10.1: off; 1.12.7: on, but too small
    # A large answer is compressed by 1.12.7 when switched on (Orthanc Explorer's script, 100+ KB).
    large = requests.get(orthanc.url + "/app/explorer.js", headers={"Accept-Encoding": "gzip"})
    assert len(large.content) > 2048 and large.headers.get("Content-Encoding") == (None if old else "gzip")
    answers = orthanc.stats(transport="rest")["transports"]["rest"]["httpAnswers"]
    assert answers == {"requests": 2, "clientAcceptsCompression": 2, "compressedByOrthanc": 0,
                       "HttpCompressionEnabled": not old, "smallestCompressedBytes": None if old else 2048}


def recorded(orthanc, files):
    """What Orthanc records and answers for these uploads (a good one, a duplicate, a bad one),
    without what differs between two Orthancs anyway (dates, ports, IDs of attachments)."""
    answers = []
    for body in [open(files[0], "rb").read(), open(files[0], "rb").read(), b"not DICOM"]:
        answer = requests.post(orthanc.url + "/instances", data=body, headers={"Accept-Encoding": "gzip"})
        content = answer.json()
        if isinstance(content, dict):
            content.pop("Path", None)
        answers.append((answer.status_code, answer.headers.get("Content-Type"),
                        answer.headers.get("Content-Encoding"), content))
    instance = orthanc.get("/instances").json()[0]
    metadata = orthanc.get("/instances/%s/metadata" % instance, params={"expand": ""}).json()
    metadata.pop("ReceptionDate", None)
    metadata.pop("LastUpdate", None)
    return answers, metadata


def test_time_rest_answers_is_ignored_and_changes_nothing(orthanc_factory, series):
    """No Orthanc lets a plugin time the answer without taking over POST /instances, which would
    change the Origin, RemoteIP, HttpUsername and error details Orthanc records: the option of earlier
    releases is ignored, said so, and an Orthanc given it records and answers exactly as one without
    the plugin."""
    without = recorded(orthanc_factory(plugin_path=None), series)
    orthanc = orthanc_factory(ingest_perf={"TimeRestAnswers": True})
    assert recorded(orthanc, series) == without
    answers, metadata = without
    assert metadata["Origin"] == "RestApi" and metadata["RemoteIP"] == "127.0.0.1"
    assert "Details" in answers[2][3]  # Orthanc's own explanation of the bad upload

    stats = orthanc.stats()
    assert "TimeRestAnswers" not in stats["configuration"]
    said = "option TimeRestAnswers was removed (no Orthanc has a hook around its REST answer"
    assert any(said in item["reason"] for item in stats["notInEffect"]), stats["notInEffect"]
    assert "responseCompressionAndSend" in {item["what"] for item in stats["unobservable"]}
    assert said in orthanc.log_text()
