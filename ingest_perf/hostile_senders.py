"""Senders that do what the standard forbids and real sites do: C-STORE with AE titles of Latin-1
bytes (the standard says ASCII; Orthanc stores what it received). pynetdicom refuses such titles
and encodes them as ASCII; here its validators and its A-ASSOCIATE-RQ encoding are relaxed for the
duration of one association only.

    from ingest_perf.hostile_senders import c_store_raw_aets
    statuses = c_store_raw_aets(orthanc.dicom_port, [dataset], b"CT_SALLE_\\xc9", b"PACS_H\\xd4PITAL")
"""
import contextlib

from pynetdicom import AE
from pynetdicom import _config as pynetdicom_config
from pynetdicom.pdu import A_ASSOCIATE_RQ

from ingest_perf.clients import c_store


@contextlib.contextmanager
def _latin1_pynetdicom():
    validators = dict(pynetdicom_config.VALIDATORS)
    own = "_wrap_encode_str" in A_ASSOCIATE_RQ.__dict__  # else inherited from pynetdicom's PDU class
    encode = A_ASSOCIATE_RQ.__dict__.get("_wrap_encode_str")
    pynetdicom_config.VALIDATORS["AE"] = lambda value: (True, "")
    pynetdicom_config.VALIDATORS["UI"] = lambda value: (True, "")  # "LEAKY.LUCILLE" as a SOP class
    A_ASSOCIATE_RQ._wrap_encode_str = staticmethod(lambda value, pad=0: value.ljust(pad).encode("latin-1"))
    try:
        yield
    finally:
        pynetdicom_config.VALIDATORS.clear()
        pynetdicom_config.VALIDATORS.update(validators)
        if own:
            A_ASSOCIATE_RQ._wrap_encode_str = encode
        else:
            del A_ASSOCIATE_RQ._wrap_encode_str


def c_store_raw_aets(port, datasets, calling, called, syntax="1.2.840.10008.1.2.1"):
    """C-STORE of pydicom `datasets` on one association to 127.0.0.1:`port`, with the AE titles
    `calling` and `called` as the given bytes (at most 16); returns the DIMSE statuses."""
    with _latin1_pynetdicom():
        ae = AE(ae_title=calling.decode("latin-1"))
        for sop_class in sorted({str(ds.SOPClassUID) for ds in datasets}):
            ae.add_requested_context(sop_class, syntax)
        association = ae.associate("127.0.0.1", port, ae_title=called.decode("latin-1"))
        if not association.is_established:
            raise RuntimeError("association refused or aborted")
        try:
            return [c_store(association, ds).Status for ds in datasets]
        finally:
            association.release()
