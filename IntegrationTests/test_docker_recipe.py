"""The docker/ recipe cannot be built here (no Docker engine), so its parts are run for real:
the RUN line's scripts, the install into a staged plugin folder, and Orthanc with the image's
configuration file."""
import json
import os
import re
import subprocess

from ingest_perf.orthanc_process import OrthancProcess

DOCKER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docker")


def test_dockerfile_only_runs_the_tested_scripts():
    text = open(os.path.join(DOCKER, "Dockerfile")).read()
    runs = re.findall(r"^RUN (.*)$", text, re.MULTILINE)
    assert runs == ["./Resources/install-dependencies.sh && ./docker/install-plugin.sh && mkdir -p /var/lib/orthanc/db"]
    assert "COPY docker/orthanc.json /etc/orthanc/orthanc.json" in text


def test_install_script_and_image_configuration(tmp_path):
    # The release build (Resources/make-release.sh), installed from its archive.
    staged = tmp_path / "root"
    subprocess.run([os.path.join(DOCKER, "install-plugin.sh")], check=True, capture_output=True,
                   env=dict(os.environ, DESTDIR=str(staged)))
    installed = staged / "usr/share/orthanc/plugins/libOrthancIngestPerf.so"
    assert installed.is_file()

    image_config = json.load(open(os.path.join(DOCKER, "orthanc.json")))
    assert image_config["Plugins"] == ["/usr/share/orthanc/plugins/libOrthancIngestPerf.so"]
    # The image's configuration, on free ports, in a temporary folder, with the staged plugin.
    extra = {k: v for k, v in image_config.items()
             if k not in ("StorageDirectory", "IndexDirectory", "HttpPort", "DicomPort", "Plugins",
                          "RemoteAccessAllowed")}
    orthanc = OrthancProcess(str(tmp_path / "orthanc"), plugin_path=str(installed),
                             ingest_perf=image_config["IngestPerf"], extra_config=extra)
    with orthanc:
        stats = orthanc.stats()
        assert stats["enabled"] is True
        assert stats["configuration"] == image_config["IngestPerf"]
