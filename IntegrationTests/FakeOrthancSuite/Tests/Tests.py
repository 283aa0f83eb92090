"""The stand-in suite's tests: what the comparison must tell apart."""
import unittest

from Toolbox import Get

REMOTE = None  # the Orthanc under test's HTTP port (Run.py's --rest)


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
