"""The docker/ recipe cannot be built here (no Docker engine), so its parts are run for real:
the RUN line's scripts, the install into a staged plugin folder, and Orthanc with the image's
configuration file."""
import fnmatch
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


def docker_ignores(path, patterns):
    """Whether Docker leaves `path` (relative, '/'-separated) out of the context: a pattern matches the
    path or one of its parent folders, "**/" any number of folders before it."""
    parts = path.split("/")
    for pattern in patterns:
        anywhere = pattern.startswith("**/")
        pattern = pattern[3:] if anywhere else pattern
        for end in range(1, len(parts) + 1):
            starts = range(end) if anywhere else [0]
            if any(fnmatch.fnmatchcase("/".join(parts[start:end]), pattern) for start in starts):
                return True
    return False


def test_the_context_leaves_out_what_builds_and_tests_leave():
    """A working tree where the release, the tests or the venv ran must build the same image as a fresh
    clone: .dockerignore leaves their output out, and keeps every file of the repository in."""
    repo = os.path.dirname(DOCKER)
    patterns = [line.strip() for line in open(os.path.join(repo, ".dockerignore"))
                if line.strip() and not line.startswith("#")]
    for left in ("build-release/CMakeCache.txt", "build/libOrthancIngestPerf.so", "build-asan/x",
                 "build-deps/jsoncpp/x",
                 "build-roots/debian13/etc/os-release", "build-roots-pkg/debian12/usr/sbin/Orthanc", ".venv/bin/python",
                 os.path.join("ingest_perf", "__pycache__", "perf_report.cpython-311.pyc"),  # files that are not there:
                 os.path.join("IntegrationTests", "x.pyc"), ".pytest_cache/v"):  # joined, not a path named
        assert docker_ignores(left, patterns), left
    tracked = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    assert len(tracked) > 100
    assert not [path for path in tracked if docker_ignores(path, patterns)]


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
