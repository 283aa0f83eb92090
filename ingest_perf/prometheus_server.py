"""A real Prometheus server for integration tests, and a parser of the text exposition (no pytest
dependency).

    from ingest_perf.prometheus_server import PrometheusServer, parse_metrics
    server = PrometheusServer(work_dir, ["127.0.0.1:8042"])   # scrapes /perf/metrics every second
    try:
        server.wait_for(lambda: server.scalar("count(orthanc_ingest_up)") == 1, "a first scrape")
        print(server.query("sum(orthanc_ingest_instances_total)"))
    finally:
        server.stop()

Debian's /usr/bin/prometheus (package `prometheus`), with a generated configuration, its TSDB in
`work_dir` and its web API on a free loopback port; `stop()` terminates it (kills it after 10 s).
"""
import os
import re
import subprocess
import time

import requests

from ingest_perf.orthanc_process import free_tcp_port

PROMETHEUS_BINARY = "/usr/bin/prometheus"
PROMTOOL_BINARY = "/usr/bin/promtool"

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """({(name, frozenset of (label, value)): float}, {family: TYPE}) of a Prometheus text."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            types[name] = kind
            continue
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if not match:
            raise ValueError("not a sample line: %r" % line)
        labels = frozenset(_LABEL.findall(match.group(2) or ""))
        samples[(match.group(1), labels)] = float(match.group(3))
    return samples, types


class PrometheusServer:
    def __init__(self, work_dir, targets, metrics_path="/perf/metrics", rule_files=()):
        """`rule_files`: alert or recording rule files to load (evaluated every second)."""
        self.port = free_tcp_port()
        self.url = "http://127.0.0.1:%d" % self.port
        config = os.path.join(work_dir, "prometheus.yml")
        with open(config, "w", encoding="utf-8") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: orthanc\n    metrics_path: %s\n"
                    "    static_configs:\n      - targets: [%s]\n"
                    % (metrics_path, ", ".join("'%s'" % t for t in targets)))
            if rule_files:
                f.write("rule_files:\n%s" % "".join("  - '%s'\n" % os.path.abspath(p) for p in rule_files))
        self.log_path = os.path.join(work_dir, "prometheus.log")
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [PROMETHEUS_BINARY, "--config.file=" + config, "--storage.tsdb.path=" + os.path.join(work_dir, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % self.port, "--log.level=warn"],
            stdout=self._log, stderr=subprocess.STDOUT)
        try:
            self.wait_for(lambda: requests.get(self.url + "/-/ready", timeout=2).status_code == 200, "ready")
        except BaseException:
            self.stop()
            raise

    def wait_for(self, condition, what, timeout=30):
        """Polls `condition()` every 0.2 s until it is true; AssertionError after `timeout` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                with open(self.log_path, encoding="utf-8", errors="replace") as f:
                    raise AssertionError("prometheus exited: " + f.read()[-2000:])
            try:
                if condition():
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise AssertionError("prometheus: %s not reached in %d s" % (what, timeout))

    def query(self, promql):
        """The result list of an instant query (/api/v1/query)."""
        answer = requests.get(self.url + "/api/v1/query", params={"query": promql}, timeout=10).json()
        if answer["status"] != "success":
            raise AssertionError("%s: %s" % (promql, answer))
        return answer["data"]["result"]

    def get(self, path):
        """The data of a GET of the HTTP API (/api/v1/rules, /api/v1/alerts)."""
        answer = requests.get(self.url + path, timeout=10).json()
        if answer["status"] != "success":
            raise AssertionError("%s: %s" % (path, answer))
        return answer["data"]

    def scalar(self, promql):
        """The value of the first result of an instant query, None when there is none."""
        result = self.query(promql)
        return float(result[0]["value"][1]) if result else None

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
