"""A stand-in for orthanc-tests' Tests/Run.py: starts the peer Orthanc (log to /dev/null, as the suite
does), then unittest.main, which the comparison's runner replaces."""
import argparse
import json
import os
import subprocess
import sys
import time
import unittest

import Tests  # of this folder: on PYTHONPATH, as when Run.py runs as the script itself
from Tests import Orthanc  # noqa: F401 - unittest.main finds the tests in __main__, as the suite's do

parser = argparse.ArgumentParser()
parser.add_argument("--force", action="store_true")
parser.add_argument("--orthanc")
parser.add_argument("--rest", type=int)
args = parser.parse_args()
Tests.REMOTE = args.rest
with open("/tmp/IntegrationTestsConfiguration.json", "w") as stream:
    json.dump({"HttpPort": 5000, "DicomPort": 5001, "StorageDirectory": "/tmp/OrthancStorage",
               "IndexDirectory": "/tmp/OrthancStorage", "AuthenticationEnabled": False, "DicomAet": "ORTHANCTEST"},
              stream)
peer = subprocess.Popen([args.orthanc, "/tmp/IntegrationTestsConfiguration.json"], stderr=open(os.devnull, "w"))
for _ in range(600):
    if Tests.Get(5000, "/system")[0] == 200:
        break
    time.sleep(0.1)
try:
    unittest.main(argv=[sys.argv[0]])
finally:
    peer.terminate()
    peer.wait()
