"""Loading the plugin into the Orthanc people run: the self-contained binary, the release archive
installed by docs/loading.md's own commands on a copy of Debian's default configuration (on both
Orthancs), a plugin loaded twice, and a plugin that cannot start. None of them may stop Orthanc."""
import json
import os
import re
import shutil
import subprocess

import pytest

from ingest_perf.debian_configuration import copy_debian_configuration
from ingest_perf.orthanc_process import BOTH_ORTHANCS, OrthancProcess

ORTHANC_VERSIONS = BOTH_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1 and 1.12.7

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOADING_DOC = os.path.join(REPO, "docs", "loading.md")
ENTRY_POINTS = ["OrthancPluginFinalize", "OrthancPluginGetName", "OrthancPluginGetVersion", "OrthancPluginInitialize"]
RUNTIME = {"libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6", "ld-linux-x86-64.so.2"}


def exported_symbols(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True, capture_output=True, text=True).stdout
    return sorted(line.split()[-1] for line in out.splitlines() if line.strip())


def needed_libraries(path):
    out = subprocess.run(["objdump", "-p", path], check=True, capture_output=True, text=True).stdout
    return {line.split()[1] for line in out.splitlines() if line.strip().startswith("NEEDED")}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """The archive of Resources/make-release.sh, unpacked: (archive path, unpacked folder)."""
    output = subprocess.run([os.path.join(REPO, "Resources", "make-release.sh")], check=True, capture_output=True,
                            text=True).stdout.splitlines()
    archive = output[0]
    assert output[1].split()[1] == os.path.basename(archive)  # "<sha256>  <name>"
    folder = tmp_path_factory.mktemp("release")
    subprocess.run(["tar", "-C", str(folder), "-xzf", archive], check=True)
    (unpacked,) = [os.path.join(folder, name) for name in os.listdir(folder)]
    return archive, unpacked


def test_the_built_plugin_exports_four_symbols_and_needs_only_the_runtime(plugin_path, release):
    for library in (plugin_path, os.path.join(release[1], "libOrthancIngestPerf.so")):
        assert exported_symbols(library) == ENTRY_POINTS
        assert needed_libraries(library) <= RUNTIME, library
        ldd = subprocess.run(["ldd", library], check=True, capture_output=True, text=True).stdout
        assert not re.search(r"Orthanc|jsoncpp|boost", ldd, re.IGNORECASE), ldd
    info = open(os.path.join(release[1], "BUILD-INFO")).read()
    assert "needs: Orthanc >= 1.10.1, x86_64 Linux with GLIBC_2.32 and GLIBCXX_3.4.29" in info


# --- docs/loading.md, literally, on a copy of Debian's default configuration ------------------------

def documented_install_commands():
    text = open(LOADING_DOC).read()
    block = re.search(r"<!-- loading-test: install -->\s*```sh\n(.*?)```\s*.*?```json\n(.*?)```", text, re.DOTALL)
    return block.group(1).strip().splitlines(), json.loads(block.group(2))


def test_install_as_documented_on_debians_default_configuration(tmp_path, release, orthanc_version, series):
    commands, documented_answer = documented_install_commands()
    archive, _ = release
    plugin_folder = str(tmp_path / "usr-share-orthanc-plugins")
    configure = copy_debian_configuration(orthanc_version, str(tmp_path / "etc-orthanc"), plugin_folder,
                                          str(tmp_path / "var"))
    orthanc = OrthancProcess(str(tmp_path / "var"), plugin_path=None, orthanc=orthanc_version,
                             configuration_writer=configure)
    orthanc.start()  # the production Orthanc, before the plugin
    assert "ingest-perf" not in orthanc.get("/plugins").json()
    shutil.copy(archive, str(tmp_path))
    shell = dict(cwd=str(tmp_path))
    try:
        for command in commands:
            if command.startswith("sudo systemctl restart orthanc"):
                orthanc.stop()
                orthanc.start()
                continue
            # The only substitutions: no sudo, this test's plugin folder and port.
            command = command.replace("sudo ", "").replace("/usr/share/orthanc/plugins/", plugin_folder + "/")
            command = command.replace("localhost:8042", "127.0.0.1:%d" % orthanc.http_port)
            result = subprocess.run(["bash", "-ec", command], capture_output=True, text=True, **shell)
            assert result.returncode == 0, (command, result.stdout, result.stderr)
            if command.startswith("cd "):
                shell["cwd"] = os.path.join(shell["cwd"], command.split()[1])
        assert json.loads(result.stdout) == documented_answer  # the curl, last
        stats = orthanc.stats()
        assert stats["enabled"] is True and stats["orthancVersion"] == orthanc_version
        assert "IngestPerf 0.1.0 is timing ingest" in orthanc.log_text()
        # Debian's own plugins load beside it, and ingest is timed.
        assert {"dicom-web", "gdcm", "ingest-perf"} <= set(orthanc.get("/plugins").json())
        orthanc.storescu(series[:3])
        assert orthanc.stats(transport="dicom")["transports"]["dicom"]["instances"]["stored"] == 3
    finally:
        orthanc.stop()


# --- loaded twice -----------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["folder-and-file", "two-copies"])
def test_loaded_twice_orthanc_still_starts_and_one_copy_runs(orthanc_factory, plugin_path, tmp_path, series, how):
    folder = tmp_path / "plugins"
    folder.mkdir()
    shutil.copy(plugin_path, str(folder))
    copy = str(folder / os.path.basename(plugin_path))
    if how == "folder-and-file":  # Debian's plugin folder plus an explicit entry for the same file
        plugins = [str(folder), copy]
    else:
        other = tmp_path / "elsewhere"
        other.mkdir()
        shutil.copy(plugin_path, str(other))
        plugins = [copy, str(other / os.path.basename(plugin_path))]
    orthanc = orthanc_factory(plugin_path=None, extra_config={"Plugins": plugins})
    names = orthanc.get("/plugins").json()
    duplicates = [n for n in names if n.startswith("ingest-perf-duplicate-")]
    assert "ingest-perf" in names and len(duplicates) == 1
    assert orthanc.log_text().count("stays inert") == 1
    orthanc.storescu(series[:2])
    stats = orthanc.stats(transport="dicom")
    assert stats["transports"]["dicom"]["instances"]["stored"] == 2  # counted once, not twice
    # Orthanc reloads its plugins on POST /tools/reset: the same names again.
    assert orthanc.post("/tools/reset").status_code == 200
    orthanc._wait_until_ready(30)
    assert sorted(orthanc.get("/plugins").json()) == sorted(names)


# --- a plugin that cannot start -------------------------------------------------------------------

def test_memory_that_cannot_be_reserved_leaves_orthanc_running(orthanc_factory, series, orthanc_version):
    """65536 labelled series reserve about 8 GB of address space (lazily backed). Under a 4 GB
    address-space limit the reservation fails (bad_alloc): Orthanc must run on without the plugin,
    and say why in its log and in /perf/stats."""
    limit = ["prlimit", "--as=%d" % (4 << 30)]
    orthanc = orthanc_factory(ingest_perf={"MaxStreams": 65536}, command_prefix=limit)
    stats = orthanc.stats()
    assert stats["enabled"] is False and stats["state"] == "inert"
    assert "could not start" in stats["reason"]
    assert all(hook["registered"] is False for hook in stats["hooks"].values())
    assert "stays loaded but inert" in orthanc.log_text() and "Orthanc runs without it" in orthanc.log_text()
    orthanc.storescu(series[:2])
    assert orthanc.get("/statistics").json()["CountInstances"] == 2
    # The same limit with the default configuration: the plugin starts (the limit is not the cause).
    fine = orthanc_factory(command_prefix=limit)
    assert fine.stats()["enabled"] is True
