"""TCP_NODELAY in Orthanc's environment: the remedy for the C-STORE answer stall (Nagle's algorithm
on Orthanc's DICOM associations), on both Orthancs; and the former option IngestPerf.DicomTcpNoDelay,
which wrote that environment from inside Orthanc and is now ignored, said so, and changes nothing.

Orthanc writes each C-STORE-RSP in two write() calls; with Nagle's algorithm on, the second waits
for the client's delayed ACK, about 40 ms per instance. DCMTK disables it on a socket when
TCP_NODELAY is in the environment (it reads it for every association): the operator starts Orthanc
with it, and the plugin only reads it. Checked three ways: the associationGap of one storescu
association (storescu itself without TCP_NODELAY), what /perf/stats reports, and the socket option
itself, read from Orthanc's own sockets (pidfd_getfd: the test duplicates Orthanc's descriptor and
asks getsockopt), for an association Orthanc accepts and for one it opens: what DCMTK's getenv found
inside Orthanc. /proc/<pid>/environ shows the environment Orthanc was started with.
"""
import ctypes
import os
import socket
import threading

import pytest
from pynetdicom import AE, evt
from pynetdicom.sop_class import Verification

from ingest_perf.orthanc_process import ALL_ORTHANCS, free_tcp_port

ORTHANC_VERSIONS = ALL_ORTHANCS

# Neither Orthanc nor storescu inherits a TCP_NODELAY of the shell that runs the tests.
UNSET = {"TCP_NODELAY": None}

_libc = ctypes.CDLL(None, use_errno=True)
_SYS_PIDFD_GETFD = 438  # x86_64 and every other Linux architecture since 5.6


def environment_of(pid):
    """The environment pid was started with, as the kernel keeps it."""
    with open("/proc/%d/environ" % pid, "rb") as f:
        entries = [entry.decode(errors="replace") for entry in f.read().split(b"\0") if entry]
    return dict(entry.split("=", 1) for entry in entries if "=" in entry)


def established_connections(pid):
    """{socket inode: (local port, remote port)} of the established TCP connections pid sees."""
    connections = {}
    for table in ("tcp", "tcp6"):
        with open("/proc/%d/net/%s" % (pid, table)) as f:
            next(f)
            for line in f:
                fields = line.split()
                if fields[3] == "01":  # TCP_ESTABLISHED
                    connections[int(fields[9])] = (int(fields[1].rsplit(":", 1)[1], 16),
                                                   int(fields[2].rsplit(":", 1)[1], 16))
    return connections


def tcp_nodelay_of_sockets(pid, match):
    """TCP_NODELAY (0 or 1) of each of pid's established TCP sockets for which match(local port,
    remote port) is true, read with getsockopt on a duplicate of pid's own descriptor."""
    connections = established_connections(pid)
    values = []
    pidfd = os.pidfd_open(pid)
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:  # closed meanwhile
                continue
            if not target.startswith("socket:["):
                continue
            ports = connections.get(int(target[len("socket:["):-1]))
            if ports is None or not match(*ports):
                continue
            duplicate = _libc.syscall(_SYS_PIDFD_GETFD, pidfd, int(fd), 0)
            if duplicate < 0:
                raise OSError(ctypes.get_errno(), "pidfd_getfd(%d, %s)" % (pid, fd))
            sock = socket.socket(fileno=duplicate)  # closing it closes the duplicate only
            try:
                values.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            finally:
                sock.close()
    finally:
        os.close(pidfd)
    return values


def accepted_association_nodelay(orthanc):
    """TCP_NODELAY of the socket of an association Orthanc accepted (held open by pynetdicom)."""
    ae = AE(ae_title="PROBE")
    ae.add_requested_context(Verification)
    association = ae.associate("127.0.0.1", orthanc.dicom_port, ae_title=orthanc.aet)
    assert association.is_established
    try:
        values = tcp_nodelay_of_sockets(orthanc.pid, lambda local, remote: local == orthanc.dicom_port)
    finally:
        association.release()
    assert len(values) == 1, values
    return values[0]


def requested_association_nodelay(orthanc):
    """TCP_NODELAY of the socket of an association Orthanc opened (C-ECHO to a pynetdicom SCP that
    holds the echo until the socket has been read)."""
    port = free_tcp_port()
    arrived, release = threading.Event(), threading.Event()

    def on_echo(event):
        arrived.set()
        release.wait(20)
        return 0x0000

    scp = AE(ae_title="NODELAYSCP")
    scp.add_supported_context(Verification)
    server = scp.start_server(("127.0.0.1", port), block=False, evt_handlers=[(evt.EVT_C_ECHO, on_echo)])
    try:
        answer = orthanc.session.put(orthanc.url + "/modalities/nodelayscp",
                                     json={"AET": "NODELAYSCP", "Host": "127.0.0.1", "Port": port}, timeout=10)
        assert answer.status_code == 200, answer.text
        echo = {}
        thread = threading.Thread(target=lambda: echo.update(
            status=orthanc.post("/modalities/nodelayscp/echo", data="{}", timeout=30).status_code))
        thread.start()
        try:
            assert arrived.wait(20), "Orthanc's C-ECHO never arrived"
            values = tcp_nodelay_of_sockets(orthanc.pid, lambda local, remote: remote == port)
        finally:
            release.set()
            thread.join(30)
        assert echo.get("status") == 200, echo
    finally:
        server.shutdown()
    assert len(values) == 1, values
    return values[0]


def association_gap_p50(orthanc, files):
    """associationGap p50 (ms) of one storescu association, storescu without TCP_NODELAY."""
    orthanc.storescu(files, env=UNSET)
    phases = orthanc.stats(transport="dicom")["transports"]["dicom"]["phases"]
    assert phases["associationGap"]["count"] == len(files) - 1
    return phases["associationGap"]["p50"]


def test_off_by_default_and_environment_untouched(orthanc_factory):
    orthanc = orthanc_factory(env=UNSET)
    stats = orthanc.stats()
    assert "DicomTcpNoDelay" not in stats["configuration"]
    status = stats["dicomTcpNoDelay"]
    assert (status["inEffect"], status["source"]) == (False, "")
    assert "configured" not in status  # no option decides it
    assert "TCP_NODELAY is not in Orthanc's environment" in status["detail"]
    assert "start Orthanc with TCP_NODELAY=1 in its environment" in status["detail"]
    assert stats["notInEffect"] == []
    assert "IngestPerf: DICOM TCP_NODELAY" not in orthanc.log_text()
    assert "TCP_NODELAY" not in environment_of(orthanc.pid)
    # DCMTK found no variable: Nagle's algorithm stays on, both ways.
    assert accepted_association_nodelay(orthanc) == 0
    assert requested_association_nodelay(orthanc) == 0


def test_the_environment_removes_the_c_store_answer_stall(orthanc_factory, series_factory):
    # 512x512 slices on purpose. storescu, without TCP_NODELAY, still writes with Nagle's
    # algorithm: the small last PDU of a dataset waits for Orthanc's delayed ACK whenever earlier
    # data is still unacknowledged. That race strikes 15-20% of 512x512 instances here, about two
    # thirds of 256x256 ones and every 128x128 one, so only with large instances does the median
    # show Orthanc's half of the stall gone (benchmarks.md has both halves side by side).
    files = series_factory(30, 7)
    default = orthanc_factory(env=UNSET)
    default_gap = association_gap_p50(default, files)
    default.terminate()  # stopping beside the next one; waited for at teardown

    orthanc = orthanc_factory(env={"TCP_NODELAY": "1"})
    stats = orthanc.stats()
    status = stats["dicomTcpNoDelay"]
    assert (status["inEffect"], status["source"]) == (True, "environment")
    assert 'TCP_NODELAY="1"' in status["detail"]
    assert stats["notInEffect"] == []
    assert "IngestPerf: DICOM TCP_NODELAY in effect" in orthanc.log_text()
    gap = association_gap_p50(orthanc, files)
    # About 45 ms without (the delayed-ACK timer), about 1 ms with.
    assert default_gap > 20, "no stall to remove: default associationGap p50 %.3f ms" % default_gap
    assert gap < default_gap / 2, "associationGap p50 %.3f ms with TCP_NODELAY=1, %.3f ms without" % (
        gap, default_gap)
    # Both kinds of association: those Orthanc accepts and those it opens (C-STORE/C-MOVE/echo SCU).
    assert accepted_association_nodelay(orthanc) == 1
    assert requested_association_nodelay(orthanc) == 1
    assert environment_of(orthanc.pid)["TCP_NODELAY"] == "1"


@pytest.mark.parametrize("value", [True, "true"])
def test_the_former_option_is_ignored_said_so_and_writes_no_environment(orthanc_factory, value):
    """IngestPerf.DicomTcpNoDelay once set TCP_NODELAY=1 in Orthanc's environment: a guest does not
    write the process's environment. Whatever its value (a wrong type included), the plugin runs, says
    the option was removed and what to do instead, and DCMTK inside Orthanc finds no variable."""
    orthanc = orthanc_factory(env=UNSET, ingest_perf={"DicomTcpNoDelay": value})
    stats = orthanc.stats()
    assert stats["state"] == "running", stats["reason"]
    assert "DicomTcpNoDelay" not in stats["configuration"]
    said = "option DicomTcpNoDelay was removed (a plugin does not write Orthanc's environment: start Orthanc " \
           "with TCP_NODELAY=1 in its environment instead"
    removed = [item for item in stats["notInEffect"] if item["option"] == "IngestPerf.DicomTcpNoDelay"]
    assert len(removed) == 1 and said in removed[0]["reason"], stats["notInEffect"]
    assert "Environment=TCP_NODELAY=1" in removed[0]["reason"] and "-e TCP_NODELAY=1" in removed[0]["reason"]
    assert said in orthanc.log_text()
    assert (stats["dicomTcpNoDelay"]["inEffect"], stats["dicomTcpNoDelay"]["source"]) == (False, "")
    assert "IngestPerf: DICOM TCP_NODELAY" not in orthanc.log_text()
    assert "TCP_NODELAY" not in environment_of(orthanc.pid)
    # What DCMTK's getenv finds inside Orthanc, for either kind of association: nothing.
    assert accepted_association_nodelay(orthanc) == 0
    assert requested_association_nodelay(orthanc) == 0


def test_the_operators_zero_is_left_as_it_is(orthanc_factory):
    orthanc = orthanc_factory(env={"TCP_NODELAY": "0"}, ingest_perf={"DicomTcpNoDelay": True})
    stats = orthanc.stats()
    status = stats["dicomTcpNoDelay"]
    assert (status["inEffect"], status["source"]) == (False, "")
    assert 'TCP_NODELAY="0"' in status["detail"] and "non-zero integer only" in status["detail"]
    assert [item["option"] for item in stats["notInEffect"]] == ["IngestPerf.DicomTcpNoDelay"]
    assert environment_of(orthanc.pid)["TCP_NODELAY"] == "0"
    assert accepted_association_nodelay(orthanc) == 0  # the plugin did not overwrite it
