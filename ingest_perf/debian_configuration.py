"""Debian's own Orthanc configuration, as its service starts Orthanc (`Orthanc /etc/orthanc/`: a folder
of JSON files that Orthanc merges), copied for a second server on this machine."""
import json
import os
import re
import shutil

from ingest_perf.orthanc_process import orthanc_root


def copy_debian_configuration(orthanc_version, target, plugin_folder, work, extra_files=None):
    """/etc/orthanc of that Orthanc's Debian copied to `target`, with only what a second server on this
    machine must change: ports, data folders and the plugin folder (`plugin_folder`, made here with a
    link to each of Debian's plugins; add others to it). `extra_files` ({name: document}) are written
    beside Debian's files, as an administrator adds /etc/orthanc/ingest-perf.json.

    Returns the `configuration_writer` of OrthancProcess: called at every (re)start with the new ports."""
    root = orthanc_root(orthanc_version)
    root = root and os.path.realpath(root)  # as realpath() gives below ("" for the host's Orthanc)
    shutil.copytree(root + "/etc/orthanc", target)
    os.makedirs(plugin_folder, exist_ok=True)
    debian_folder = root + "/usr/share/orthanc/plugins"
    for name in os.listdir(debian_folder):
        # The link's target as that Orthanc sees it (its root is "/" for it).
        os.symlink(os.path.realpath(os.path.join(debian_folder, name))[len(root):], os.path.join(plugin_folder, name))
    for name, document in (extra_files or {}).items():
        with open(os.path.join(target, name), "w") as f:
            json.dump(document, f, indent=2)

    path = os.path.join(target, "orthanc.json")
    debian_text = open(path).read()

    def write(http_port, dicom_port):  # at every (re)start: new ports
        text = debian_text
        replacements = [(r'"HttpPort"\s*:\s*8042', '"HttpPort" : %d' % http_port),
                        (r'"DicomPort"\s*:\s*4242', '"DicomPort" : %d' % dicom_port),
                        (r'"/var/lib/orthanc/db-v6"', '"%s/db"' % work),
                        (r'"/usr/share/orthanc/plugins/?"', '"%s"' % plugin_folder)]
        for pattern, value in replacements:
            text, count = re.subn(pattern, value, text)
            assert count >= 1, "Debian's orthanc.json has no %s" % pattern
        open(path, "w").write(text)
        return target

    return write
