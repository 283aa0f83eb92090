"""The stand-in suite's tests, what the comparison must tell apart, and their HTTP reads (as alice,
the generated configuration's user)."""
import base64
import json
import unittest
import urllib.error
import urllib.request

REMOTE = None  # the Orthanc under test's HTTP port (Run.py's --rest)


def Get(port, uri):
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (port, uri))
    request.add_header("Authorization", "Basic " + base64.b64encode(b"alice:orthanctest").decode())
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, None
    except OSError:
        return None, None


class Orthanc(unittest.TestCase):
    def test_system(self):
        self.assertEqual(Get(REMOTE, "/system")[0], 200)

    def test_peer_answers(self):
        self.assertEqual(Get(5000, "/system")[0], 200)

    def test_no_perf_route(self):  # differs: the plugin answers /perf/stats
        self.assertEqual(Get(REMOTE, "/perf/stats")[0], 404)

    def test_fails_on_both_sides(self):
        raise Exception("the same error on both sides")

    def test_left_out(self):  # excluded by --tests
        pass
