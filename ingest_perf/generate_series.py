"""Writes a synthetic CT series: N slices, 512x512, 16-bit, explicit VR little endian.
.venv/bin/python -m ingest_perf.generate_series FOLDER [--count N]

Deterministic: the same --seed gives byte-identical files (UIDs are derived from the seed),
so tests and benchmarks can re-send the same instances on purpose.
"""
import argparse
import hashlib
import os
import sys

import numpy as np
from pydicom.dataset import FileDataset, FileMetaDataset
from pydicom.uid import CTImageStorage, ExplicitVRLittleEndian, PYDICOM_IMPLEMENTATION_UID

UID_ROOT = "1.2.826.0.1.3680043.10.1429."  # private test root, never a real patient


def derived_uid(seed, *parts):
    digest = hashlib.sha1(("|".join([str(seed)] + [str(p) for p in parts])).encode()).hexdigest()
    return UID_ROOT + str(int(digest[:24], 16))[:30]


def part10_dataset(path, sop_class, sop_uid):
    """An empty explicit little endian Part 10 dataset with its meta header, to be filled."""
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = sop_class
    meta.MediaStorageSOPInstanceUID = sop_uid
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    meta.ImplementationClassUID = PYDICOM_IMPLEMENTATION_UID
    ds = FileDataset(path, {}, file_meta=meta, preamble=b"\0" * 128)
    ds.is_little_endian = True
    ds.is_implicit_VR = False
    ds.SOPClassUID = sop_class
    ds.SOPInstanceUID = sop_uid
    return ds


def write_series(folder, count, seed=1, rows=512, columns=512, patient="PERF^SYNTHETIC", patient_id=None,
                 accession_number=None, birth_date=None, institution=None, study_description=None):
    """Writes `count` slices; the patient and study attributes given replace the synthetic ones
    (birth_date, institution and study_description are left out unless given, so the default
    files stay byte-identical)."""
    os.makedirs(folder, exist_ok=True)
    study_uid = derived_uid(seed, "study")
    series_uid = derived_uid(seed, "series")
    rng = np.random.default_rng(seed)
    base = rng.integers(-1000, 2000, size=(rows, columns), dtype=np.int16)
    paths = []
    for index in range(count):
        sop_uid = derived_uid(seed, "instance", index)
        path = os.path.join(folder, "CT%06d.dcm" % index)
        ds = part10_dataset(path, CTImageStorage, sop_uid)
        ds.StudyInstanceUID = study_uid
        ds.SeriesInstanceUID = series_uid
        ds.PatientName = patient
        ds.PatientID = patient_id if patient_id is not None else "PERF%d" % seed
        if birth_date is not None:
            ds.PatientBirthDate = birth_date
        ds.StudyDate = "20260101"
        ds.StudyID = "1"
        ds.AccessionNumber = accession_number if accession_number is not None else "PERF%d" % seed
        if institution is not None:
            ds.InstitutionName = institution
        if study_description is not None:
            ds.StudyDescription = study_description
        ds.Modality = "CT"
        ds.SeriesNumber = 1
        ds.InstanceNumber = index + 1
        ds.ImagePositionPatient = [0.0, 0.0, float(index)]
        ds.ImageOrientationPatient = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
        ds.SliceThickness = 1.0
        ds.PixelSpacing = [0.7, 0.7]
        ds.Rows = rows
        ds.Columns = columns
        ds.SamplesPerPixel = 1
        ds.PhotometricInterpretation = "MONOCHROME2"
        ds.BitsAllocated = 16
        ds.BitsStored = 16
        ds.HighBit = 15
        ds.PixelRepresentation = 1
        ds.RescaleIntercept = 0
        ds.RescaleSlope = 1
        ds.PixelData = np.roll(base, index, axis=0).tobytes()
        ds.save_as(path, write_like_original=False)
        paths.append(path)
    return paths


class SeriesCache:
    """series(count, seed, size=512) -> the file paths of a series of `count` slices of size x size,
    written once under `root` and reused (the tests' series_factory fixture; the scenarios)."""

    def __init__(self, root):
        self.root = os.path.abspath(str(root))
        self._written = {}

    def __call__(self, count, seed, size=512):
        key = (count, seed, size)
        if key not in self._written:
            folder = os.path.join(self.root, "series-%d-seed%d-%d" % key)
            self._written[key] = write_series(folder, count, seed=seed, rows=size, columns=size)
        return list(self._written[key])


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder")
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--size", type=int, default=512, help="rows and columns")
    args = parser.parse_args()
    if args.count < 1 or args.size < 1:
        parser.error("--count and --size must be positive")
    paths = write_series(args.folder, args.count, seed=args.seed, rows=args.size, columns=args.size)
    sys.stdout.write("%d files in %s\n" % (len(paths), args.folder))


if __name__ == "__main__":
    main()
