"""Who may read /perf (issue 11): the routes inherit Orthanc's HTTP authentication and remote-access
rules, checked by Orthanc before any plugin route; the plugin has no setting of its own.
docs/rest-api.md, "Who may read /perf"."""
import subprocess

import pytest
import requests

from ingest_perf.orthanc_process import ALL_ORTHANCS

ORTHANC_VERSIONS = ALL_ORTHANCS

USER, PASSWORD = "perf-reader", "s3cret-perf"
AUTHENTICATED = {"AuthenticationEnabled": True, "RegisteredUsers": {USER: PASSWORD}}

# (method, path, status once authenticated): the parameters, accepted and refused, beyond what
# every_request() takes from GET /perf/vocabulary (each route with its method and the others).
PARAMETERS = [
    ("GET", "/perf/stats?transport=dicom", 200),
    ("GET", "/perf/stats?groupBy=remoteAet&transport=all", 200),
    ("GET", "/perf/stats?remoteAet=STORESCU", 200),
    ("GET", "/perf/stats?transport=smtp", 400),
    ("GET", "/perf/slowest?n=5", 200),
    ("GET", "/perf/diagnosis?groupBy=remoteAet", 400),
    ("GET", "/perf/slots?window=5m&transport=dicom", 200),
    ("GET", "/perf/slots?remoteAet=STORESCU", 400),
    ("GET", "/perf/ui/", 200),  # by its redirections, to /perf/ui/index.html
    ("GET", "/perf/ui/ui.js", 200),
    ("GET", "/perf/ui/nothing.js", 404),
]
METHODS = ["GET", "POST", "PUT", "DELETE"]


def every_request(orthanc):
    """Every route of the plugin's vocabulary with its method (200), with each other method (405),
    then the PARAMETERS; POST /perf/reset among them."""
    requests_ = []
    for route in orthanc.get("/perf/vocabulary").json()["routes"]:
        path = route["path"].replace("{file}", "index.html")
        requests_ += [(method, path, 200 if method == route["method"] else 405) for method in METHODS]
    return requests_ + PARAMETERS


def since(orthanc):
    return orthanc.stats(transport="all")["since"]


def test_every_route_needs_credentials_when_authentication_is_enabled(orthanc_factory):
    orthanc = orthanc_factory(extra_config=AUTHENTICATED)  # its session logs in as perf-reader
    first = since(orthanc)
    everything = every_request(orthanc)
    assert ("POST", "/perf/reset", 200) in everything and ("GET", "/perf/vocabulary", 200) in everything
    for method, path, status in everything:
        for auth in (None, (USER, "wrong"), ("nobody", PASSWORD)):
            answer = requests.request(method, orthanc.url + path, auth=auth, timeout=10)
            assert answer.status_code == 401, (method, path, auth, answer.status_code)
            assert answer.headers.get("WWW-Authenticate", "").startswith("Basic"), (method, path)
            assert b"ingest-perf" not in answer.content and b"transports" not in answer.content
    # Refused means not run: the POST /perf/reset without credentials reset nothing.
    assert since(orthanc) == first
    for method, path, status in everything:
        answer = requests.request(method, orthanc.url + path, auth=(USER, PASSWORD), timeout=10)
        assert answer.status_code == status, (method, path, answer.status_code, answer.text[:300])
        if status == 200 and path.startswith("/perf/stats"):
            assert answer.json()["plugin"] == "ingest-perf"
    assert since(orthanc) != first  # the authenticated POST /perf/reset did reset


def non_loopback_ipv4():
    """An IPv4 address of this machine other than 127.x (`hostname -I`), or None."""
    try:
        words = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    for word in words:
        if "." in word and not word.startswith("127."):
            return word
    return None


def test_remote_access_allowed_false_refuses_a_non_loopback_client(orthanc_factory):
    """Orthanc listens on every interface; a connection to this machine's own non-loopback address
    comes from that address, not 127.0.0.1, so Orthanc treats it as remote."""
    address = non_loopback_ipv4()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address (hostname -I): no remote client to test")
    local = orthanc_factory(extra_config={"RemoteAccessAllowed": False})
    remote_url = "http://%s:%d" % (address, local.http_port)
    for method, path, _ in every_request(local):
        answer = requests.request(method, remote_url + path, timeout=10)
        assert answer.status_code == 401, (method, path, answer.status_code)
        assert b"ingest-perf" not in answer.content
    # Not even with credentials: remote access is off, whoever asks.
    assert requests.get(remote_url + "/perf/stats", auth=(USER, PASSWORD), timeout=10).status_code == 401
    # The same client from the loopback interface is served.
    assert requests.get(local.url + "/perf/stats", timeout=10).status_code == 200

    # The control: the same non-loopback path works once Orthanc allows remote access (with
    # authentication, as Orthanc wants then), so the 401 above came from RemoteAccessAllowed.
    remote = orthanc_factory(extra_config=dict(AUTHENTICATED, RemoteAccessAllowed=True))
    remote_url = "http://%s:%d" % (address, remote.http_port)
    assert requests.get(remote_url + "/perf/stats", timeout=10).status_code == 401
    answer = requests.get(remote_url + "/perf/stats?transport=all", auth=(USER, PASSWORD), timeout=10)
    assert answer.status_code == 200 and answer.json()["plugin"] == "ingest-perf"
