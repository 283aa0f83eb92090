"""What a guest never does (issue 32; docs/coexistence.md, "What the plugin registers and what it
never does"), checked three ways so that a removed call cannot come back unnoticed:

- in its source (Plugin/): no allocator-wide call, no call of Orthanc's REST API, no C-STORE filter,
  no reading of other threads' state or of the host's TCP table, no initial-exec TLS; the few calls
  that act beyond the plugin's own memory stay in the one file that needs them;
- in its binary: it imports no allocator-wide function;
- in a running Orthanc, under strace, during C-STORE and HTTP ingest (a failed upload included):
  every reading of the process's descriptors, of its threads and every socket option read comes
  from the plugin's own thread ("ingest-perf"), never from one of Orthanc's.
"""
import os
import re
import signal
import subprocess
import time

import pytest
import requests

from ingest_perf.orthanc_process import ALL_ORTHANCS

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against each

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A pattern of Plugin/ and the only files allowed to hold it (none: nowhere), with why.
RULES = [
    (r"\bmalloc_trim\b|\bmallopt\b|\bmalloc_info\b", [], "acts on the whole process's heap"),
    (r"RestApi(Get|Post|Put|Delete)", [], "a call of Orthanc's REST API: database transactions, locks"),
    # a call or a declaration (the name alone may be text: the site's Python script is searched for it)
    (r"RegisterIncomingCStoreInstanceFilter\s*\(|RegisterCStoreFilter\s*\(", [],
     "Orthanc stops at the first C-STORE filter that accepts: the site's filters after it would not run"),
    (r"RegisterReceivedInstance\b", ["Plugin/Capture/IngestHooks.cpp", "Plugin/Platform/OrthancSdk.h",
                                     "Plugin/Platform/OrthancSdk.cpp"],
     "one plugin only may hold it: taken once every plugin has loaded, from RegisterLateHooks only"),
    (r"/proc/self/task|/proc/net|ReadThreadActivity", [],
     "other threads' state, or the host's TCP table"),
    (r"\bprocess_vm_readv\b", ["Plugin/Platform/HttpConnectionIdentity.cpp"],
     "the one read of another library's memory: civetweb's request information, checked"),
    (r"\b(setenv|unsetenv|putenv|clearenv)\s*\(", [],
     "the environment is the process's: its operator sets it (TCP_NODELAY for DCMTK included), a guest reads it"),
    (r"tls_model", [], "initial-exec TLS takes the static TLS room other plugins may need"),
    (r"\b(getsockopt|getsockname|getpeername)\s*\(|ForEachProcessSocket|VisitProcessSockets",
     ["Plugin/Correlation/ProcessSockets.cpp", "Plugin/Correlation/ProcessSockets.h",
      "Plugin/Correlation/IngestWatcher.cpp", "Plugin/Correlation/IngestWatcher.h"],
     "Orthanc's sockets are read by the plugin's own thread only"),
]


def plugin_sources():
    for folder, _, files in os.walk(os.path.join(REPO_ROOT, "Plugin")):
        for name in files:
            if name.endswith((".cpp", ".h")):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, REPO_ROOT), open(path, encoding="utf-8").read()


def test_the_plugin_source_makes_no_process_wide_call():
    sources = list(plugin_sources())
    assert len(sources) > 50
    broken = []
    for pattern, allowed, why in RULES:
        for path, text in sources:
            for number, line in enumerate(text.splitlines(), 1):
                code = line.split("//")[0]  # comments may name what the code must not do
                if re.search(pattern, code) and path not in allowed:
                    broken.append("%s:%d: %s (%s)" % (path, number, line.strip(), why))
    assert not broken, "\n".join(broken)


def test_the_plugin_binary_imports_no_allocator_wide_call(plugin_path):
    undefined = subprocess.run(["nm", "-D", "--undefined-only", plugin_path], capture_output=True, text=True,
                               check=True).stdout
    imported = {line.split()[-1].split("@")[0] for line in undefined.splitlines() if line.strip()}
    assert "malloc" in imported or "operator new" in undefined or "_Znwm" in imported  # the listing is real
    assert not imported & {"malloc_trim", "mallopt", "malloc_info", "malloc_stats"}, imported


# One strace line: "<tid> <syscall>(<arguments>) = <result>" (strace -f -qq; "<unfinished ...>" and
# "<... resumed>" halves are matched by their first part).
LINE = re.compile(r"^(\d+)\s+(\w+)\((.*)")
PROCESS_FILES = re.compile(r'"/proc/(self|thread-self|\d+)/(fd|task|net)\b')


def test_orthancs_threads_never_read_the_process_descriptors_threads_or_sockets(orthanc_factory, series_factory,
                                                                              tmp_path):
    orthanc = orthanc_factory()
    threads = {name: open("/proc/%d/task/%s/comm" % (orthanc.pid, name)).read().strip()
               for name in os.listdir("/proc/%d/task" % orthanc.pid)}
    plugin_threads = [tid for tid, name in threads.items() if name == "ingest-perf"]
    assert len(plugin_threads) == 1, threads  # the plugin's one thread, named
    trace = str(tmp_path / "strace.txt")
    # Every thread of Orthanc, from now on (the hooks of the instances below, the plugin's thread).
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", trace, "-e", "trace=openat,getsockopt,process_vm_readv",
                               "-p", str(orthanc.pid)], stderr=subprocess.PIPE)
    try:
        time.sleep(1.0)  # attached to every thread
        files = series_factory(8, 61, size=64)
        orthanc.storescu(files[:4])
        orthanc.storescu(files[4:], calling_aet="SECOND")
        session = requests.Session()
        for path in files[:3]:
            with open(path, "rb") as f:
                assert session.post(orthanc.url + "/instances", data=f.read()).status_code == 200
        assert session.post(orthanc.url + "/instances", data=b"not DICOM").status_code == 400
        time.sleep(2.5)  # the plugin's thread reads the connections once a second while Orthanc ingests
        assert orthanc.stats()["transports"]["dicom"]["instances"]["stored"] == 8
    finally:
        tracer.send_signal(signal.SIGINT)  # detaches; Orthanc goes on
        tracer.wait(timeout=30)

    offenders = []
    plugin_reads = 0
    traced_threads = set()
    for line in open(trace, encoding="utf-8", errors="replace"):
        match = LINE.match(line)
        if not match:
            continue
        tid, call, arguments = match.groups()
        traced_threads.add(tid)
        reads_process = call == "openat" and PROCESS_FILES.search(arguments)
        reads_socket = call == "getsockopt" and ("SO_COOKIE" in arguments or "TCP_INFO" in arguments)
        if reads_process or reads_socket:
            if tid in plugin_threads:
                plugin_reads += 1
            else:
                offenders.append("%s (%s): %s" % (tid, threads.get(tid, "a thread started since"), line.strip()))
    assert plugin_reads > 0, "the plugin's thread read nothing: the test would prove nothing"
    assert len(traced_threads) >= 3  # Orthanc's storing threads were traced too
    assert not offenders, "\n".join(offenders[:20])
    # civetweb's request information, copied (at most once per request) only until the plugin's thread
    # has confirmed it: 4 ingest requests above.
    assert sum(1 for line in open(trace, encoding="utf-8", errors="replace") if "process_vm_readv(" in line) <= 4


def test_the_plugin_keeps_no_descriptor_per_thread(orthanc_factory, series_factory):
    # Every instance split into CPU, CPU-wait and blocked (its thread's schedstat read at each hook), on
    # many of Orthanc's HTTP threads at once: the plugin opens and closes the file at each reading. A
    # descriptor kept per thread is one more of Orthanc's for each of its threads, each one listed and
    # asked again at every reading of Orthanc's sockets (the soak: 67 descriptors against Orthanc's 8).
    from concurrent.futures import ThreadPoolExecutor

    orthanc = orthanc_factory(ingest_perf={"PhasePartsSampling": 1})

    def descriptors():
        listed = {}
        for fd in os.listdir("/proc/%d/fd" % orthanc.pid):
            try:
                listed[fd] = os.readlink("/proc/%d/fd/%s" % (orthanc.pid, fd))
            except OSError:
                pass  # closed meanwhile
        return listed

    before = descriptors()
    files = series_factory(24, 62, size=64)
    with ThreadPoolExecutor(8) as pool:  # closing connections: each request on a thread of Orthanc's
        for status in pool.map(lambda path: requests.post(orthanc.url + "/instances", data=open(path, "rb").read(),
                                                          headers={"Connection": "close"}).status_code, files):
            assert status == 200
    orthanc.storescu(files[:4], calling_aet="SPLIT")
    stats = orthanc.stats()
    assert stats["transports"]["rest"]["instances"]["stored"] == 24
    assert stats["transports"]["rest"]["phases"]["persist"]["parts"]["sampled"] >= 20  # split indeed
    after = descriptors()
    assert not [target for target in after.values() if "schedstat" in target], after
    # Orthanc's own (its database, its storage's last file) and the plugin's few (its eventfd, its epoll,
    # /proc/self/fd kept open for the next reading): a handful more at most, not one per thread.
    assert len(after) <= len(before) + 4, (before, after)
