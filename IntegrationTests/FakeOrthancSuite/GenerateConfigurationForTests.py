"""A stand-in for orthanc-tests' generator (test_orthanc_suite.py): it downloads Orthanc's default
configuration, which the comparison replaces by the Orthanc under test's own (`Orthanc --config`),
and writes the suite's configuration."""
import json
import sys
import urllib.request

target = sys.argv[sys.argv.index("--target") + 1]
default = urllib.request.urlopen("https://orthanc.uclouvain.be/hg/orthanc/raw-file/default/OrthancServer/Resources/"
                                 "Configuration.json").read().decode()
assert '"StorageDirectory"' in default, default[:300]  # an Orthanc's default configuration, with its comments
with open(target, "w") as stream:
    json.dump({"HttpPort": 8042, "DicomPort": 4242, "AuthenticationEnabled": True, "RemoteAccessAllowed": True,
               "RegisteredUsers": {"alice": "orthanctest"}, "DicomAet": "ORTHANC"}, stream, indent=1)
