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
from ingest_perf.orthanc_process import ALL_ORTHANCS, HOST_ORTHANC

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0

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


# --- the archive holds what the docs point to --------------------------------------------------------

def heading_anchors(path):
    """The anchors GitHub gives the headings of a Markdown file (outside code blocks)."""
    text = re.sub(r"```.*?```", "", open(path).read(), flags=re.DOTALL)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"(?m)^#+ (.+)$", text)}


@pytest.mark.parametrize("orthanc_version", [HOST_ORTHANC])
def test_the_archive_holds_what_the_docs_point_to(release, orthanc, series_factory):
    """The library, the report (runnable with python3 alone), the dashboard, the alert rules, the licence
    and notices, a sample configuration and the reference: every document the plugin's answers, the
    README and INSTALL.txt name is in it, with the heading they name; SHA256SUMS covers every file."""
    _, unpacked = release
    files = {os.path.relpath(os.path.join(folder, name), unpacked)
             for folder, _, names in os.walk(unpacked) for name in names}
    assert {"libOrthancIngestPerf.so", "orthanc-ingest-perf-report", "orthanc-ingest-perf-report.1",
            "python/__main__.py", "python/ingest_perf/perf_report.py", "grafana-dashboard.json", "prometheus-alerts.yml",
            "prometheus-alerts.test.yml", "ingest-perf.json", "LICENSE", "NOTICE", "README.md", "NEWS",
            "INSTALL.txt", "BUILD-INFO", "SHA256SUMS"} <= files
    assert {"docs/" + name for name in os.listdir(os.path.join(REPO, "docs")) if name.endswith(".md")} <= files
    listed = [line.split("  ", 1)[1] for line in open(os.path.join(unpacked, "SHA256SUMS")).read().splitlines()]
    assert sorted(listed) == sorted(files - {"SHA256SUMS"})
    assert os.access(os.path.join(unpacked, "orthanc-ingest-perf-report"), os.X_OK)

    # What the plugin points to (fixes' effects, the diagnosis' documentation), the README's and
    # INSTALL.txt's links, resolved inside the archive.
    plugin_text = open(os.path.join(unpacked, "libOrthancIngestPerf.so"), "rb").read().decode("latin-1")
    targets = set(re.findall(r"(docs/[a-z0-9-]+\.md(?:#[a-z0-9_-]+)?)", plugin_text))
    assert len(targets) >= 5, targets
    readme = re.sub(r"```.*?```", "", open(os.path.join(unpacked, "README.md")).read(), flags=re.DOTALL)
    targets |= {t for t in re.findall(r"\]\(((?:docs/|LICENSE|NOTICE)[^)\s]*)\)", readme)}
    targets |= set(re.findall(r"\b(docs/[a-z0-9-]+\.md)", open(os.path.join(unpacked, "INSTALL.txt")).read()))
    for target in sorted(targets):
        file, _, anchor = target.partition("#")
        path = os.path.join(unpacked, file)
        assert os.path.isfile(path), target
        assert not anchor or anchor in heading_anchors(path), target

    # The report, from the archive, on a host's python3 alone, against a live Orthanc.
    orthanc.storescu(series_factory(3, 11, size=64))
    run = subprocess.run(["/usr/bin/python3", "-c", "import sys; print(sys.version_info >= (3, 7))"],
                         capture_output=True, text=True)
    assert run.stdout.strip() == "True"
    report = subprocess.run([os.path.join(unpacked, "orthanc-ingest-perf-report"), "--url",
                             "127.0.0.1:%d" % orthanc.http_port], capture_output=True, text=True, timeout=60,
                            cwd="/", env={"PATH": "/usr/bin:/bin"})
    assert report.returncode == 0, report.stderr
    assert "DICOM (C-STORE): 3 stored" in report.stdout
    assert max(len(line) for line in report.stdout.splitlines()) <= 80


# --- docs/loading.md, literally, on a copy of Debian's default configuration ------------------------

def documented_install_commands():
    text = open(LOADING_DOC).read()
    block = re.search(r"<!-- loading-test: install -->\s*```sh\n(.*?)```\s*.*?```json\n(.*?)```", text, re.DOTALL)
    return block.group(1).strip().splitlines(), json.loads(block.group(2))


def test_install_as_documented_on_debians_default_configuration(orthanc_factory, tmp_path, release, orthanc_version,
                                                                series):
    commands, documented_answer = documented_install_commands()
    archive, _ = release
    plugin_folder = str(tmp_path / "usr-share-orthanc-plugins")
    configure = copy_debian_configuration(orthanc_version, str(tmp_path / "etc-orthanc"), plugin_folder,
                                          str(tmp_path / "var"))
    # the production Orthanc, before the plugin (stopped by the factory at teardown)
    orthanc = orthanc_factory(work_dir=str(tmp_path / "var"), plugin_path=None, configuration_writer=configure)
    assert "ingest-perf" not in orthanc.get("/plugins").json()
    shutil.copy(archive, str(tmp_path))
    shell = dict(cwd=str(tmp_path))
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
    # Its log lines carry its name as other plugins' do where Orthanc prefixes them (1.12.4 and later:
    # "dicom-web:/Plugin.cpp:635] ..."), not Orthanc's own file ("PluginsManager.cpp:158] ...").
    lines = orthanc.log_text().splitlines()
    (started,) = [line for line in lines if "IngestPerf 0.1.0 is timing ingest" in line]
    if orthanc_version != HOST_ORTHANC:  # 1.12.7 and 1.13.0
        assert re.search(r" ingest-perf:/Plugin\.cpp:\d+\] IngestPerf 0\.1\.0 is timing", started), started
        assert any(re.search(r" dicom-web:/\w+\.cpp:\d+\] ", line) for line in lines)
    else:
        assert re.search(r" PluginsManager\.cpp:\d+\] IngestPerf 0\.1\.0 is timing", started), started
    # Debian's own plugins load beside it, and ingest is timed.
    assert {"dicom-web", "gdcm", "ingest-perf"} <= set(orthanc.get("/plugins").json())
    orthanc.storescu(series[:3])
    assert orthanc.stats(transport="dicom")["transports"]["dicom"]["instances"]["stored"] == 3


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
    # Orthanc loses a SIGTERM that comes this soon after POST /tools/reset, plugins or not (seen on
    # 1.10.1 without any): its teardown ends in SIGKILL after 20 s, in the background.


def test_renamed_it_still_knows_itself(orthanc_factory, plugin_path, tmp_path, series):
    """A packager's or an administrator's name for the file: the plugin is not taken for another plugin
    that may need the ReceivedInstanceCallback (it kept it from itself, and a cut upload was counted
    requestWithoutInstance instead of failed: the soak with --plugin /tmp/plugin-soak.so)."""
    renamed = str(tmp_path / "ingest-perf.so")
    shutil.copy(plugin_path, renamed)
    orthanc = orthanc_factory(plugin_path=renamed)
    hooks = orthanc.stats()["hooks"]
    assert hooks["receivedInstance"]["state"] != "left", hooks["receivedInstance"]
    assert hooks["otherPlugins"]["loadedBefore"] == [] and hooks["otherPlugins"]["loadedAfter"] == []
    orthanc.storescu(series[:2])
    assert orthanc.stats(transport="dicom")["transports"]["dicom"]["instances"]["stored"] == 2


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
