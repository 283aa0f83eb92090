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
    ({"PrometheusLabels": "remoteAet"}, "IngestPerf.PrometheusLabels: expected a list of label names"),
    ({"PrometheusLabels": ["remoteAET"]}, 'IngestPerf.PrometheusLabels: expected label names among remoteAet, '
                                          'remoteIp, calledAet, receivedSyntax, storedSyntax, sopClass and sizeClass, '
                                          'got "remoteAET"'),
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


def test_max_series_is_ignored_and_said_with_its_new_name(orthanc_factory):
    """MaxSeries, MaxStreams' former name (a label stream, not a DICOM series), is ignored since 0.2,
    said in the log and in notInEffect with the name to use."""
    orthanc = orthanc_factory(ingest_perf={"MaxSeries": 3})
    said = "option MaxSeries was removed (its name is MaxStreams): ignored"
    assert "IngestPerf: " + said in orthanc.log_text()
    stats = orthanc.stats()
    assert stats["state"] == "running"
    assert stats["notInEffect"] == [{"option": "IngestPerf.MaxSeries", "reason": said}]
    assert stats["configuration"]["MaxStreams"] == 128 and "MaxSeries" not in stats["configuration"]
    assert stats["labels"]["streams"]["capacity"] == 128 and "series" not in stats["labels"]


def owner_plugin(plugin_path):
    """A test plugin (IntegrationTests/Plugins) that registers Orthanc's single ReceivedInstanceCallback."""
    return os.path.join(os.path.dirname(plugin_path), "libTestReceivedInstanceOwner.so")


@pytest.mark.parametrize("owner_first", [True, False], ids=["owner-listed-first", "owner-listed-after"])
def test_another_plugin_that_may_need_the_received_instance_callback_keeps_it(orthanc_factory, plugin_path, series,
                                                                             owner_first):
    """"Auto" (the default): with a plugin Orthanc loads that is not known to leave it, in either order,
    the plugin never takes the single-owner ReceivedInstanceCallback; the other plugin's registration
    succeeds, Orthanc logs no error, and the figures say what holding it would have added."""
    owner = owner_plugin(plugin_path)
    orthanc = orthanc_factory(extra_config={"Plugins": [owner, plugin_path] if owner_first else [plugin_path, owner]})
    assert orthanc.get("/test-owner/status").json() == {"registered": True}
    orthanc.storescu(series[:4])
    orthanc.http_upload(series[4:8])
    stats = orthanc.stats()
    hook = stats["hooks"]["receivedInstance"]
    assert (hook["registered"], hook["state"]) == (False, "left")
    assert "libTestReceivedInstanceOwner.so" in hook["reason"] and "preStore" in hook["cost"]
    assert "ReceivedInstanceCallback left to the site's plugins" in orthanc.log_text()
    assert not [line for line in orthanc.log_text().splitlines() if line.startswith("E")]
    for name in ("rest", "dicom"):
        transport = stats["transports"][name]
        assert transport["instances"]["stored"] == 4
        phases = transport["phases"]
        assert phases["preStore"]["observable"] is False
        assert "ReceivedInstanceCallback" in phases["preStore"]["reason"]
        # the records start at the instance filter: persist and serverTotal timed from there
        assert phases["persist"]["count"] == 4
        assert phases["serverTotal"]["count"] == 4
        assert transport["instances"]["storedWithoutTimeline"] == 0
    # receive and the association's gaps end at the instance filter instead
    assert stats["transports"]["rest"]["phases"]["receive"]["count"] == 4
    assert stats["transports"]["dicom"]["phases"]["associationGap"]["count"] == 3


def test_asked_for_it_takes_the_received_instance_callback_once_every_plugin_has_loaded(orthanc_factory,
                                                                                        plugin_path, series):
    """true: taken once Orthanc has started, so a plugin listed after it still gets it (and keeps it:
    Orthanc refuses the plugin's late registration, and logs that); alone, it holds it."""
    owner = owner_plugin(plugin_path)
    orthanc = orthanc_factory(ingest_perf={"ReceivedInstanceCallback": True},
                              extra_config={"Plugins": [plugin_path, owner]})
    assert orthanc.get("/test-owner/status").json() == {"registered": True}
    hook = orthanc.stats()["hooks"]["receivedInstance"]
    assert (hook["registered"], hook["state"]) == (False, "refused")
    assert "another plugin holds it" in hook["reason"]
    assert {"option": "IngestPerf.ReceivedInstanceCallback", "reason": hook["reason"]} in \
        orthanc.stats()["notInEffect"]
    orthanc.http_upload(series[:2])
    assert stored(orthanc.stats(), "rest") == 2

    alone = orthanc_factory()  # "Auto", and no other plugin: held
    hook = alone.stats()["hooks"]["receivedInstance"]
    assert (hook["registered"], hook["state"]) == (True, "held")
    assert "holds the ReceivedInstanceCallback, taken once every plugin had loaded" in alone.log_text()
    alone.http_upload(series[:3])
    assert alone.stats()["transports"]["rest"]["phases"]["preStore"]["count"] == 3


def test_opt_out_leaves_the_callback_to_a_plugin_loaded_later(orthanc_factory, plugin_path, series):
    orthanc = orthanc_factory(ingest_perf={"ReceivedInstanceCallback": False},
                              extra_config={"Plugins": [plugin_path, owner_plugin(plugin_path)]})
    assert orthanc.get("/test-owner/status").json() == {"registered": True}
    hook = orthanc.stats()["hooks"]["receivedInstance"]
    assert hook["registered"] is False and "IngestPerf.ReceivedInstanceCallback is false" in hook["reason"]
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
