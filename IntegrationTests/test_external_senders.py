"""Senders this project did not write (issue 20): DCMTK's storescu, GDCM's gdcmscu, pynetdicom, a second
Orthanc as modality (its C-STORE jobs) and as peer (HTTP), DICOMweb STOW-RS by dicomweb-client. For each,
with and without TCP_NODELAY=1 in the receiving Orthanc's environment: the exact count in its transport and no other outcome,
the associations of its calling AET as Orthanc's own log counts them ("Association Received from AET"),
and the diagnosis's verdict."""
import re

import pydicom
import pytest
from dicomweb_client.api import DICOMwebClient

from ingest_perf import clients
from ingest_perf.orthanc_process import ALL_ORTHANCS, HOST_ORTHANC, debian_plugin
from ingest_perf.stats_checks import wait_for, without_findings_of_a_busy_machine

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0
# The verdict judges how fast Orthanc and the senders are: Orthancs in memory, the test's processes
# ahead of the machine's other work (conftest.py). Without it, in a run beside the sanitizer tests,
# pynetdicom took 110 ms per dataset and the Nagle stall was no longer the larger part of its cycle.
AHEAD_OF_OTHER_WORK = True

INSTANCES = 20
DICOMWEB = {"DicomWeb": {"Enable": True, "Root": "/dicom-web/"}}
# The rules that must never fire on a clean ingest, whatever the sender.
NEVER = {"stores-failing", "unreadable-instances", "rejected-or-duplicate"}


def send_storescu(receiver, files, sender_factory):
    receiver.storescu(files, calling_aet="DCMTK_SCU", env={"TCP_NODELAY": None})  # Debian's default: Nagle
    return "dicom", "DCMTK_SCU", 1


def send_gdcmscu(receiver, files, sender_factory):
    # One gdcmscu process per instance, as a script would: one association each.
    clients.gdcmscu(receiver.dicom_port, files, "GDCM_SCU", receiver.aet, process_per_file=True, timeout=60)
    return "dicom", "GDCM_SCU", len(files)


def send_pynetdicom(receiver, files, sender_factory):
    clients.pynetdicom_store(receiver.dicom_port, files, "PYNET_SCU", receiver.aet)  # one association, Nagle kept
    return "dicom", "PYNET_SCU", 1


def orthanc_sender(receiver, sender_factory, files):
    sender = sender_factory(plugin_path=None, aet="ORTHANC_SCU", orthanc=HOST_ORTHANC, extra_config={
        "DicomModalities": {"receiver": [receiver.aet, "127.0.0.1", receiver.dicom_port]},
        "OrthancPeers": {"receiver": [receiver.url + "/"]}})
    sender.http_upload(files)
    return sender, sorted(sender.get("/instances").json())


def send_orthanc_modality(receiver, files, sender_factory):
    # Three store jobs, as an operator or a routing script sends three batches: three associations.
    sender, instances = orthanc_sender(receiver, sender_factory, files)
    for part in (instances[:7], instances[7:14], instances[14:]):
        clients.orthanc_store(sender.url, "receiver", part)
    return "dicom", "ORTHANC_SCU", 3


def send_orthanc_peer(receiver, files, sender_factory):
    sender, instances = orthanc_sender(receiver, sender_factory, files)
    answer = sender.post("/peers/receiver/store", json={"Resources": instances, "Synchronous": True})
    assert answer.status_code == 200, answer.text
    return "rest", None, 0


def send_stow_rs(receiver, files, sender_factory):
    client = DICOMwebClient(url=receiver.url + "/dicom-web")
    client.store_instances(datasets=[pydicom.dcmread(path) for path in files[:10]])
    client.store_instances(datasets=[pydicom.dcmread(path) for path in files[10:]])
    return "plugin", None, 0


SENDERS = {"storescu": send_storescu, "gdcmscu": send_gdcmscu, "pynetdicom": send_pynetdicom,
           "orthanc-modality": send_orthanc_modality, "orthanc-peer": send_orthanc_peer, "stow-rs": send_stow_rs}
# Senders that keep Nagle's algorithm on their socket: Orthanc's answer stall first, then, once
# TCP_NODELAY=1 in Orthanc's environment fixes Orthanc's side, their own.
ANSWER_STALL_SENDERS = {"storescu", "orthanc-modality", "pynetdicom"}


@pytest.mark.parametrize("no_delay", [False, True], ids=["nagle", "nodelay"])
@pytest.mark.parametrize("sender", sorted(SENDERS))
def test_an_external_sender_is_counted_exactly_and_diagnosed(orthanc_factory, plugin_path, orthanc_version,
                                                             series_factory, sender, no_delay):
    receiver = orthanc_factory(plugin_path=None, aet="RECEIVER", arguments=["--verbose"],
                               env={"TCP_NODELAY": "1" if no_delay else None},
                               extra_config=dict(DICOMWEB, Plugins=[debian_plugin("libOrthancDicomWeb.so",
                                                                                  orthanc_version), plugin_path]))
    files = series_factory(INSTANCES, 81, size=64)
    transport, aet, associations = SENDERS[sender](receiver, files, orthanc_factory)

    assert len(receiver.get("/instances").json()) == INSTANCES  # Orthanc's own count
    stats = wait_for(receiver, lambda s: s["transports"][transport]["instances"]["stored"] == INSTANCES
                     and s["openRecords"]["count"] == 0 and s["openRecords"]["receiving"]["count"] == 0)
    for name, figures in stats["transports"].items():
        instances = figures["instances"]
        expected = INSTANCES if name in (transport, "all") else 0
        assert instances["stored"] == expected, (name, instances)
        others = {k: v for k, v in instances.items() if k not in ("stored", "failureReasons") and v}
        assert others == {}, (name, others)
    assert stats["openRecords"]["count"] == 0

    if aet is not None:
        log = receiver.log_text()
        in_log = len(re.findall(r"Association Received from AET %s on IP" % aet, log))
        assert in_log == associations, in_log
        peers = wait_for(receiver, lambda s: all(p["inProgress"] == 0 for p in s["associations"]["byRemoteAet"]))
        (peer,) = [p for p in peers["associations"]["byRemoteAet"] if p["remoteAet"] == aet]
        # Known, not fixed (issue 34; docs/phases.md): under the full test command's load, the first
        # instance of an association drained by a reader before the plugin's thread has read its
        # connection is counted as an association of one instance of its own (seen in 2 full runs of 4
        # on 2026-11-29, once each). At most that, and said.
        split = peer["finished"] - in_log
        if split:
            print("%s: %d association(s) counted for %d: %s" % (sender, peer["finished"], in_log, peer))
        assert split in (0, 1) and peer["inProgress"] == 0, peer
        assert peer["instancesPerAssociation"]["sum"] == INSTANCES
        assert peer["gap"]["count"] == INSTANCES - in_log - split  # none between two associations

    answer = receiver.get("/perf/diagnosis").json()
    fired, findings = without_findings_of_a_busy_machine(answer, [r["id"] for r in answer["rules"] if r["fired"]], None)
    fired = set(fired)
    top = findings[0]["id"] if findings else None
    print("%s, %s, TCP_NODELAY=1 %s: top finding %s, fired %s; %s" % (
        orthanc_version, sender, no_delay, top, sorted(fired), answer["verdict"]))
    assert not fired & NEVER, answer["verdict"]
    if transport != "dicom":
        assert not any(rule.startswith("cstore") for rule in fired), answer["verdict"]
    if sender in ANSWER_STALL_SENDERS:
        if no_delay:
            # Orthanc's side fixed: the sender's own stall is named, with the advice for a sender whose
            # software the plugin cannot know (these calling AETs are no tool's default).
            assert "cstore-answer-stall" not in fired, answer["verdict"]
            assert top == "sender-stall", answer["verdict"]
            assert "the sender's TCP_NODELAY option, if it has one" in findings[0]["fix"]["action"]
        else:
            assert top == "cstore-answer-stall", answer["verdict"]
