"""Configuration: a bad IngestPerf section leaves Orthanc running and the plugin inert, saying why
with the key; an unknown key is a warning; the opt-outs do what they say."""
import os

import pytest

from ingest_perf.stats_checks import stored


@pytest.mark.parametrize("section, key", [
    ({"Enable": "yes"}, "IngestPerf.Enable"),
    ({"MaxThreads": 0}, "IngestPerf.MaxThreads"),
    ({"ChangeTableSize": "big"}, "IngestPerf.ChangeTableSize"),
    ({"MaxPeers": 1.5}, "IngestPerf.MaxPeers"),
    ({"RecentInstances": 15}, "IngestPerf.RecentInstances: expected an integer from 16 to 262144"),
    ({"RecentInstances": "big"}, "IngestPerf.RecentInstances"),
    ({"HashPeers": "yes"}, "IngestPerf.HashPeers: expected true or false"),
    ({"HashPeers": 1}, "IngestPerf.HashPeers: expected true or false"),
    ({"ReceivedInstanceCallback": False, "MaxPeers": 0}, "IngestPerf.MaxPeers"),
    ([], "IngestPerf: expected a JSON object"),
])
def test_bad_configuration_leaves_the_plugin_inert_naming_the_key(orthanc_factory, section, key):
    orthanc = orthanc_factory(ingest_perf=section)
    stats = orthanc.stats()
    assert stats["state"] == "inert" and key in stats["reason"], stats["reason"]
    assert all(not hook["registered"] for hook in stats["hooks"].values())
    assert key in orthanc.log_text()


def test_an_unknown_key_is_a_warning_with_the_closest_known_one(orthanc_factory, series):
    orthanc = orthanc_factory(ingest_perf={"ReceivedInstanceCallbak": False, "Frobnicate": 1})
    log = orthanc.log_text()
    assert "IngestPerf: unknown option ReceivedInstanceCallbak; did you mean ReceivedInstanceCallback?" in log
    assert "IngestPerf: unknown option Frobnicate (in the IngestPerf section; ignored)" in log
    stats = orthanc.stats()
    assert stats["state"] == "running" and stats["hooks"]["receivedInstance"]["registered"] is True
    assert {item["option"] for item in stats["notInEffect"]} == {"IngestPerf.ReceivedInstanceCallbak",
                                                                "IngestPerf.Frobnicate"}
    orthanc.http_upload(series[:2])
    assert stored(orthanc.stats(), "rest") == 2


def test_max_series_is_read_as_max_streams_for_one_release(orthanc_factory):
    """MaxSeries, MaxStreams' former name (a label stream, not a DICOM series), is still read and
    said deprecated in the log; the answers give the new name."""
    orthanc = orthanc_factory(ingest_perf={"MaxSeries": 3})
    assert "IngestPerf: option MaxSeries is deprecated, its name is now MaxStreams: read as MaxStreams" in \
        orthanc.log_text()
    stats = orthanc.stats()
    assert stats["state"] == "running" and stats["notInEffect"] == []
    assert stats["configuration"]["MaxStreams"] == 3 and "MaxSeries" not in stats["configuration"]
    assert stats["labels"]["streams"]["capacity"] == 3 == stats["labels"]["series"]["capacity"]


def owner_plugin(plugin_path):
    """A test plugin (IntegrationTests/Plugins) that registers Orthanc's single ReceivedInstanceCallback."""
    return os.path.join(os.path.dirname(plugin_path), "libTestReceivedInstanceOwner.so")


def test_another_plugin_owns_the_received_instance_callback(orthanc_factory, plugin_path, series):
    orthanc = orthanc_factory(extra_config={"Plugins": [owner_plugin(plugin_path), plugin_path]})
    assert orthanc.get("/test-owner/status").json() == {"registered": True}
    orthanc.storescu(series[:4])
    orthanc.http_upload(series[4:8])
    stats = orthanc.stats()
    hook = stats["hooks"]["receivedInstance"]
    assert hook["registered"] is False and "another plugin" in hook["reason"]
    assert "no ReceivedInstanceCallback" in orthanc.log_text()
    for name in ("rest", "dicom"):
        transport = stats["transports"][name]
        assert transport["instances"]["stored"] == 4
        for phase in ("receive", "preStore", "associationGap"):
            assert transport["phases"][phase]["observable"] is False
            assert transport["phases"][phase]["reason"]
        assert "ReceivedInstanceCallback" in transport["phases"]["preStore"]["reason"]
        # the records start at the next visible hook: still timed from there
        assert transport["phases"]["persist"]["count"] == 4
        assert transport["phases"]["serverTotal"]["count"] == 4
        assert transport["instances"]["storedWithoutTimeline"] == 0


def test_opt_out_leaves_the_callback_to_a_plugin_loaded_later(orthanc_factory, plugin_path, series):
    orthanc = orthanc_factory(ingest_perf={"ReceivedInstanceCallback": False},
                              extra_config={"Plugins": [plugin_path, owner_plugin(plugin_path)]})
    assert orthanc.get("/test-owner/status").json() == {"registered": True}
    hook = orthanc.stats()["hooks"]["receivedInstance"]
    assert hook["registered"] is False and "IngestPerf.ReceivedInstanceCallback" in hook["reason"]
    orthanc.http_upload(series[:2])
    assert stored(orthanc.stats(), "rest") == 2


def test_disabled_plugin_registers_nothing(orthanc_factory, series):
    orthanc = orthanc_factory(ingest_perf={"Enable": False})
    orthanc.http_upload(series[:3])
    stats = orthanc.stats()
    assert stats["enabled"] is False
    assert stored(stats, "all") == 0
    assert all(not hook["registered"] for hook in stats["hooks"].values())
    assert len(orthanc.get("/instances").json()) == 3


def test_transcoder_hook_follows_ingest_transcoding_and_transcode_timing(orthanc_factory, series):
    orthanc = orthanc_factory(extra_config={"IngestTranscoding": "1.2.840.10008.1.2.4.70"},
                              ingest_perf={"TranscodeTiming": "FallThrough"})
    orthanc.http_upload(series[:2])
    stats = orthanc.stats(transport="rest")
    assert stats["hooks"]["transcoder"]["registered"] is True
    rest = stats["transports"]["rest"]
    assert rest["instances"]["stored"] == 2
    assert rest["instances"]["transcodeAttempts"] == 2
    # Orthanc still transcodes (our hook falls through to DCMTK): stored as JPEG lossless.
    instance = orthanc.get("/instances").json()[0]
    syntax = orthanc.get("/instances/%s/metadata/TransferSyntax" % instance).text
    assert syntax == "1.2.840.10008.1.2.4.70"
