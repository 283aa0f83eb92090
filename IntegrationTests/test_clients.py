"""The test clients' own behaviour that the counts of other tests rest on."""
import http.server
import threading
import time

from ingest_perf.clients import KeepAliveSession


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    connections = []

    def setup(self):
        super().setup()
        Handler.connections.append(self.client_address)

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def test_a_keep_alive_connection_idle_for_half_a_second_is_not_reused():
    """Orthanc's HTTP server closes a connection idle for 1 s (1.10.1), and a POST sent on it at that
    moment is lost, not retried: KeepAliveSession reuses a connection only while it has been idle for
    less than IDLE_SECONDS, and opens a new one after."""
    Handler.connections = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = "http://127.0.0.1:%d/" % server.server_address[1]
    try:
        with KeepAliveSession() as session:
            for _ in range(3):
                assert session.get(url, timeout=10).status_code == 200
            assert len(Handler.connections) == 1  # one connection, reused
            time.sleep(KeepAliveSession.IDLE_SECONDS + 0.2)
            assert session.get(url, timeout=10).status_code == 200
            assert len(Handler.connections) == 2  # idle too long: a new one
            assert session.get(url, timeout=10).status_code == 200
            assert len(Handler.connections) == 2
    finally:
        server.shutdown()
        server.server_close()
