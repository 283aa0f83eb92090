"""A site's orthanc-python script, for the guest matrix (IntegrationTests/test_guests_*.py): the five
hooks sites register, each recording what it saw, one JSON line per event, appended to
$SITE_RECORDS/python.jsonl.

- ReceivedInstanceCallback: sets InstitutionName of every instance to INSTITUTION (the way sites fix
  tags on the way in), and records the SOP Instance UID and origin;
- IncomingCStoreInstanceFilter: refuses, with the DIMSE status REFUSED_STATUS, the instances whose
  SOP Instance UID ends in an odd digit;
- IncomingHttpRequestFilter: refuses a POST carrying the header "X-Site-Refuse: yes"; records every
  POST (GETs are the tests' own reads, whose number varies);
- OnStoredInstance and OnChange: record what was stored and each change.

Orthanc's Python interpreter is the system's (Debian 12: 3.11, Debian 13: 3.13), without pydicom:
the tag is set by a small Part-10 editor below (little endian, explicit or implicit VR; what the
tests send), not by pydicom as a site would.

The registrations' results are recorded too; orthanc-python ignores what Orthanc answers to a
registration (a ReceivedInstanceCallback that another plugin holds is refused by Orthanc with an
error in its log, and the Python call returns None all the same): only the callbacks' calls tell.
"""
import json
import os
import struct

import orthanc

INSTITUTION = "SITE FIXED INSTITUTION"
REFUSED_STATUS = 0xA802
RECORDS = os.path.join(os.environ["SITE_RECORDS"], "python.jsonl")

IMPLICIT_LITTLE_ENDIAN = "1.2.840.10008.1.2"
BIG_ENDIAN = "1.2.840.10008.1.2.2"
LONG_VRS = {b"OB", b"OD", b"OF", b"OL", b"OV", b"OW", b"SQ", b"SV", b"UC", b"UN", b"UR", b"UT", b"UV"}
SOP_INSTANCE_UID = (0x0008, 0x0018)
INSTITUTION_NAME = (0x0008, 0x0080)


def record(hook, **fields):
    fields["hook"] = hook
    with open(RECORDS, "a") as f:  # one write per line, under the GIL
        f.write(json.dumps(fields, sort_keys=True) + "\n")


def refused_by_site(sop_instance_uid):
    return sop_instance_uid[-1:].isdigit() and int(sop_instance_uid[-1]) % 2 == 1


# --- a Part-10 file's top-level elements, up to a tag ---------------------------------------------

def elements(part10):
    """(tag, VR or None, element start, value start, value end) of each top-level element of a Part-10
    file's data set (after the meta header), in order, until one of undefined length."""
    if part10[128:132] != b"DICM":
        raise ValueError("not a Part-10 file")
    position, syntax, explicit = 132, None, True
    while position + 8 <= len(part10):
        group, element = struct.unpack_from("<HH", part10, position)
        if group != 0x0002 and syntax is None:
            raise ValueError("no TransferSyntaxUID in the meta header")
        if group != 0x0002 and explicit and syntax == IMPLICIT_LITTLE_ENDIAN:
            explicit = False
        if group != 0x0002 and syntax == BIG_ENDIAN:
            raise ValueError("big endian is not handled")
        if explicit:
            vr = part10[position + 4:position + 6]
            if vr in LONG_VRS:
                length, header = struct.unpack_from("<I", part10, position + 8)[0], 12
            else:
                length, header = struct.unpack_from("<H", part10, position + 6)[0], 8
        else:
            vr, length, header = None, struct.unpack_from("<I", part10, position + 4)[0], 8
        if length == 0xFFFFFFFF:
            return
        value = position + header
        if (group, element) == (0x0002, 0x0010):
            syntax = part10[value:value + length].rstrip(b"\0 ").decode("ascii")
        yield (group, element), vr, position, value, value + length
        position = value + length


def read_string(part10, tag):
    for found, _, _, value, end in elements(part10):
        if found == tag:
            return part10[value:end].rstrip(b"\0 ").decode("ascii", "replace")
        if found > tag and found[0] != 0x0002:
            return None
    return None


def with_string(part10, tag, vr, text):
    """part10 with the data set's element `tag` set to `text` (inserted in tag order if absent)."""
    value = text.encode("ascii")
    if len(value) % 2:
        value += b" "
    explicit, start, end = True, None, None
    for found, found_vr, element_start, _, value_end in elements(part10):
        if found[0] == 0x0002:
            continue
        explicit = found_vr is not None
        if found >= tag:
            start, end = element_start, (value_end if found == tag else element_start)
            break
    if start is None:
        raise ValueError("no element after %04X,%04X to insert before" % tag)
    header = struct.pack("<HH", *tag) + (vr + struct.pack("<H", len(value)) if explicit
                                         else struct.pack("<I", len(value)))
    return part10[:start] + header + value + part10[end:]


# --- the hooks -----------------------------------------------------------------------------------

def on_received(received, origin):
    try:
        sop = read_string(received, SOP_INSTANCE_UID)
    except (ValueError, struct.error):  # not DICOM: Orthanc calls before it parses, and refuses it after
        record("receivedInstance", sop=None, origin=int(origin))
        return orthanc.ReceivedInstanceAction.KEEP_AS_IS, None
    record("receivedInstance", sop=sop, origin=int(origin))
    return orthanc.ReceivedInstanceAction.MODIFY, with_string(received, INSTITUTION_NAME, b"LO", INSTITUTION)


def on_cstore(instance):
    tags = json.loads(instance.GetInstanceSimplifiedJson())
    sop = tags["SOPInstanceUID"]
    refused = refused_by_site(sop)
    record("cstoreFilter", sop=sop, institution=tags.get("InstitutionName"), refused=refused,
           aet=instance.GetInstanceRemoteAet())
    return REFUSED_STATUS if refused else 0


def on_http(uri, **request):
    if request.get("method") != orthanc.HttpMethod.POST:
        return True
    headers = {name.lower(): value for name, value in request.get("headers", {}).items()}
    refused = headers.get("x-site-refuse") == "yes"
    record("httpFilter", uri=uri, refused=refused)
    return not refused


def on_stored(instance, instance_id):
    tags = json.loads(instance.GetInstanceSimplifiedJson())
    record("onStored", id=instance_id, sop=tags.get("SOPInstanceUID"), institution=tags.get("InstitutionName"),
           origin=int(instance.GetInstanceOrigin()))


def on_change(change_type, level, resource_id):
    record("onChange", change=int(change_type), level=int(level), id=resource_id)


for name, register, callback in (
        ("ReceivedInstanceCallback", orthanc.RegisterReceivedInstanceCallback, on_received),
        ("IncomingCStoreInstanceFilter", orthanc.RegisterIncomingCStoreInstanceFilter, on_cstore),
        ("IncomingHttpRequestFilter", orthanc.RegisterIncomingHttpRequestFilter, on_http),
        ("OnStoredInstanceCallback", orthanc.RegisterOnStoredInstanceCallback, on_stored),
        ("OnChangeCallback", orthanc.RegisterOnChangeCallback, on_change)):
    try:
        outcome = repr(register(callback))
    except Exception as error:  # noqa: BLE001 - what the site would see
        outcome = "%s: %s" % (type(error).__name__, error)
    record("register", what=name, outcome=outcome)
