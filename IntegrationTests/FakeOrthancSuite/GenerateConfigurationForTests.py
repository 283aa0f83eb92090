"""A stand-in for orthanc-tests' generator (test_orthanc_suite.py): it downloads Orthanc's default
configuration, which the comparison replaces by the Orthanc under test's own, and writes the suite's."""
import json
import re
import sys
import urllib.request

target = sys.argv[sys.argv.index("--target") + 1]
text = urllib.request.urlopen("https://orthanc.uclouvain.be/hg/orthanc/raw-file/default/OrthancServer/Resources/"
                              "Configuration.json").read().decode()
text = re.sub(r"(?m)^\s*//.*$", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))  # Orthanc's comments
config = json.loads(text)
config.update({"HttpPort": 8042, "DicomPort": 4242, "AuthenticationEnabled": True, "RemoteAccessAllowed": True,
               "RegisteredUsers": {"alice": "orthanctest"}, "DicomAet": "ORTHANC"})
with open(target, "w") as stream:
    json.dump(config, stream, indent=1)
