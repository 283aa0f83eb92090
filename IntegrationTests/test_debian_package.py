"""The Debian package (Resources/make-debian-package.sh), installed as an administrator installs it, in a
Debian 12 root (Orthanc 1.10.1) and a Debian 13 root (Orthanc 1.12.7), copies of the roots of
Resources/make-package-roots.sh: lintian finds nothing to say; `apt-get install ./the.deb` resolves its
dependencies; Orthanc started as Debian's service starts it (user orthanc, `Orthanc --logdir=/var/log/orthanc
/etc/orthanc`) loads the plugin once, from Debian's plugin folder, with its configuration file, and stores
instances it times; the report is a command on PATH; an upgrade to a higher version keeps the administrator's
edit of /etc/orthanc/ingest-perf.json; `remove` and `purge` leave an Orthanc that starts cleanly, without the
plugin. Each root's apt, dpkg and Orthanc output is kept in build/package-test/<root>.log for whoever reads
the run."""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest
import requests

from ingest_perf.orthanc_process import free_tcp_port

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOTS = os.environ.get("INGEST_PERF_PACKAGE_ROOTS") or os.path.join(REPO, "build-roots-pkg")
LOGS = os.path.join(REPO, "build", "package-test")
PACKAGE = "orthanc-ingest-perf"
VERSION = re.search(r"project\(OrthancIngestPerf VERSION ([0-9.]+)", open(os.path.join(REPO, "CMakeLists.txt")).read()
                    ).group(1)
UPGRADE = VERSION + "+upgrade1"  # higher for dpkg: the same plugin, a second build
ORTHANC_OF = {"debian12": "1.10.1", "debian13": "1.12.7"}


def run(command, log, shown=None, **kwargs):
    """Runs a command, its output appended to `log` under the command (or `shown`); returns its
    CompletedProcess."""
    result = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                            timeout=kwargs.pop("timeout", 600), **kwargs)
    with open(log, "a") as f:
        f.write("\n%s\n%s%s(exit code %d)\n" % (shown or "$ " + " ".join(command), result.stdout, result.stderr,
                                                 result.returncode))
    return result


@pytest.fixture(scope="module")
def packages():
    """The package twice: the project's version, and a higher one for the upgrade. Each build runs lintian
    (errors and warnings fail it); here lintian, pedantic and informational tags included, says nothing."""
    built = {}
    os.makedirs(LOGS, exist_ok=True)
    log = os.path.join(LOGS, "build.log")
    open(log, "w").close()
    for version in (VERSION, UPGRADE):
        result = run([os.path.join(REPO, "Resources", "make-debian-package.sh"), "--version", version], log,
                     timeout=1200)
        assert result.returncode == 0, result.stderr[-3000:]
        path = result.stdout.splitlines()[-2]
        assert os.path.basename(path) == "%s_%s_amd64.deb" % (PACKAGE, version)
        built[version] = path
    lintian = run(["lintian", "--pedantic", "-I", built[VERSION]], log)
    tags = [line for line in lintian.stdout.splitlines() if re.match(r"^[EWIPX]: ", line)]
    assert lintian.returncode == 0 and not tags, lintian.stdout
    return built


@pytest.fixture(scope="module")
def roots():
    result = subprocess.run([os.path.join(REPO, "Resources", "make-package-roots.sh"), ROOTS], capture_output=True,
                            text=True, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    return ROOTS


class Root:
    """A copy of a cached root, and Orthanc in it as Debian's service runs it."""

    def __init__(self, name, cached, log):
        self.name = name
        self.path = os.path.join(LOGS, name + "-root")
        self.log = log
        if os.path.exists(self.path):
            shutil.rmtree(self.path)
        subprocess.run(["cp", "-a", cached, self.path], check=True)
        self.http_port, self.dicom_port = free_tcp_port(), free_tcp_port()
        # The root's own configuration, with this test's ports (others run on this machine at once).
        path = self.path + "/etc/orthanc/orthanc.json"
        text = open(path).read()
        text, http = re.subn(r'"HttpPort"\s*:\s*8042', '"HttpPort" : %d' % self.http_port, text)
        text, dicom = re.subn(r'"DicomPort"\s*:\s*4242', '"DicomPort" : %d' % self.dicom_port, text)
        assert http == dicom == 1
        open(path, "w").write(text)
        passwd = dict(line.split(":")[0:1] + [line] for line in open(self.path + "/etc/passwd"))
        fields = passwd["orthanc"].split(":")
        self.user = "%s:%s" % (fields[2], fields[3])
        self.process = None

    def shell(self, *command):
        """A command in the root, /proc and /dev mounted in a private mount namespace."""
        return run(["unshare", "--mount", "--propagation", "private", "sh", "-ec",
                    'mount -t proc proc "$0/proc"; mount --rbind /dev "$0/dev"; exec chroot "$0" "$@"', self.path,
                    "/usr/bin/env", "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C.UTF-8",
                    "PATH=/usr/sbin:/usr/bin:/sbin:/bin"] + list(command), self.log,
                   shown="%s# %s" % (self.name, " ".join(command)))

    def apt(self, *arguments):
        result = self.shell("apt-get", "-y", *arguments)  # as an administrator types it
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def start_orthanc(self):
        """Orthanc as Debian's service starts it: as user orthanc, `Orthanc --logdir=/var/log/orthanc
        /etc/orthanc` (every file of the folder read, the plugin folder listed in orthanc.json)."""
        for old in glob.glob(self.path + "/var/log/orthanc/*"):
            os.remove(old)
        self.process = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-ec",
             'mount -t proc proc "$0/proc"; mount --rbind /dev "$0/dev"; exec chroot --userspec="$1" "$0" '
             '/usr/sbin/Orthanc --logdir=/var/log/orthanc /etc/orthanc', self.path, self.user],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while True:
            assert self.process.poll() is None, "Orthanc stopped at start-up:\n" + self.orthanc_log()
            try:
                if requests.get(self.url + "/system", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            assert time.time() < deadline, "Orthanc not ready:\n" + self.orthanc_log()
            time.sleep(0.3)

    def stop_orthanc(self):
        text = self.orthanc_log()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        with open(self.log, "a") as f:
            f.write("\n--- Orthanc's log (/var/log/orthanc in the root), exit code %s:\n%s"
                    % (self.process.returncode, text))
        self.process = None
        return text

    def orthanc_log(self):
        # Orthanc.log.<date> and Orthanc.log, a link to it
        return "".join(open(path, errors="replace").read() for path in sorted(glob.glob(
            self.path + "/var/log/orthanc/Orthanc.log*")) if not os.path.islink(path))

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.http_port

    def get(self, path, **kwargs):
        answer = requests.get(self.url + path, timeout=30, **kwargs)
        assert answer.status_code == 200, (path, answer.status_code, answer.text)
        return answer.json()


def plugin_lines(log):
    """The lines the plugin logged, and any error line."""
    lines = log.splitlines()
    return [line for line in lines if "IngestPerf" in line], [line for line in lines if line.startswith("E")]


@pytest.mark.parametrize("name", sorted(ORTHANC_OF))
def test_install_upgrade_remove_purge(packages, roots, name, series_factory):
    os.makedirs(LOGS, exist_ok=True)
    log = os.path.join(LOGS, name + ".log")
    open(log, "w").close()
    root = Root(name, os.path.join(roots, name), log)
    try:
        # --- install, as an administrator does ---------------------------------------------------------
        for version, path in packages.items():
            shutil.copy(path, root.path + "/tmp/")
        output = root.apt("install", "/tmp/%s_%s_amd64.deb" % (PACKAGE, VERSION))
        assert "Setting up %s (%s)" % (PACKAGE, VERSION) in output
        status = root.shell("dpkg-query", "-W", "-f", "${Status} ${Version}", PACKAGE).stdout
        assert status == "install ok installed " + VERSION
        files = root.shell("dpkg", "-L", PACKAGE).stdout.split()
        for path in ("/usr/share/orthanc/plugins/libOrthancIngestPerf.so", "/usr/lib/orthanc/libOrthancIngestPerf.so."
                     + VERSION, "/etc/orthanc/ingest-perf.json", "/usr/bin/orthanc-ingest-perf-report",
                     "/usr/share/orthanc-ingest-perf/grafana-dashboard.json",
                     "/usr/share/orthanc-ingest-perf/prometheus-alerts.yml",
                     "/usr/share/doc/orthanc-ingest-perf/copyright"):
            assert path in files, path
        assert root.shell("cat", "/var/lib/dpkg/info/%s.conffiles" % PACKAGE).stdout.split() == \
            ["/etc/orthanc/ingest-perf.json"]
        copyright = open(root.path + "/usr/share/doc/orthanc-ingest-perf/copyright").read()
        assert "GNU AFFERO GENERAL PUBLIC LICENSE" in copyright and "JsonCpp" in copyright and "uPlot" in copyright

        root.start_orthanc()
        assert root.get("/system")["Version"] == ORTHANC_OF[name]
        plugins = root.get("/plugins")
        assert plugins.count("ingest-perf") == 1 and not [p for p in plugins if p.startswith("ingest-perf-")]
        assert root.get("/plugins/ingest-perf")["RootUri"] == "../perf/ui/index.html"
        stats = root.get("/perf/stats")
        assert stats["state"] == "running" and stats["notInEffect"] == [], stats["notInEffect"]
        assert stats["configuration"]["HashPeers"] is False  # the commented-out options are off
        files = series_factory(3, 91, size=64)
        sent = run(["/usr/bin/storescu", "-aec", "ORTHANC", "127.0.0.1", str(root.dicom_port)] + files, log)
        assert sent.returncode == 0, sent.stderr
        deadline = time.time() + 20
        while root.get("/perf/stats")["transports"]["dicom"]["instances"]["stored"] != 3:
            assert time.time() < deadline
            time.sleep(0.3)
        # The report, a command on PATH in the root, with the root's python3.
        report = root.shell("orthanc-ingest-perf-report", "--url", "localhost:%d" % root.http_port)
        assert report.returncode == 0, report.stderr
        assert "DICOM (C-STORE): 3 stored" in report.stdout
        assert max(len(line) for line in report.stdout.splitlines()) <= 80
        started, errors = plugin_lines(root.stop_orthanc())
        assert len([line for line in started if "IngestPerf %s is timing ingest" % VERSION in line]) == 1, started
        assert not errors, errors

        # --- an administrator's edit survives an upgrade ------------------------------------------------
        path = root.path + "/etc/orthanc/ingest-perf.json"
        original = open(path).read()
        edited = original.replace('// , "HashPeers" : true', ', "HashPeers" : true')
        assert edited != original
        open(path, "w").write(edited)
        output = root.apt("install", "/tmp/%s_%s_amd64.deb" % (PACKAGE, UPGRADE))
        assert "Unpacking %s (%s) over (%s)" % (PACKAGE, UPGRADE, VERSION) in output
        assert root.shell("dpkg-query", "-W", "-f", "${Version}", PACKAGE).stdout == UPGRADE
        assert open(path).read() == edited
        root.start_orthanc()
        stats = root.get("/perf/stats")
        assert stats["state"] == "running" and stats["configuration"]["HashPeers"] is True
        root.stop_orthanc()

        # --- remove, then purge: Orthanc starts cleanly, without the plugin -----------------------------
        output = root.apt("remove", PACKAGE)
        assert "not empty so not removed" not in output, output
        assert not os.path.lexists(root.path + "/usr/share/orthanc-ingest-perf")  # nothing left (the report ran)
        assert not os.path.lexists(root.path + "/usr/share/orthanc/plugins/libOrthancIngestPerf.so")
        assert not os.path.exists(root.path + "/usr/bin/orthanc-ingest-perf-report")
        assert open(path).read() == edited  # remove keeps the configuration
        root.start_orthanc()
        assert "ingest-perf" not in root.get("/plugins")
        started, errors = plugin_lines(root.stop_orthanc())
        assert not started and not errors, started + errors

        root.apt("purge", PACKAGE)
        assert not os.path.exists(path)
        assert root.shell("dpkg-query", "-W", "-f", "${Status}", PACKAGE).stdout in ("", "unknown ok not-installed")
        root.start_orthanc()
        assert "ingest-perf" not in root.get("/plugins")
        started, errors = plugin_lines(root.stop_orthanc())
        assert not started and not errors, started + errors
    finally:
        if root.process is not None:
            root.stop_orthanc()
        shutil.rmtree(root.path, ignore_errors=True)
