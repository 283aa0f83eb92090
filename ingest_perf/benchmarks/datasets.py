"""Synthetic datasets in the shapes of the published Orthanc studies, generated offline and
deterministically (the same seed gives the same bytes, UIDs included):

  ct      a CT series, 373 slices of 512x512, 16-bit, explicit little endian (~187 MB)
  mammo   a mammography-like study, 8 large single-frame images (~850 MB; scalable)
  cardio  a cardiology-like study, 26 multi-frame XA files of 37 frames 512x512 8-bit (~250 MB)
  onco    an oncology-like study, 1635 small PET-like images of 330x330 16-bit (~356 MB)
"""
import os

import numpy as np
from pydicom.uid import (CTImageStorage, DigitalMammographyXRayImageStorageForPresentation,
                         PositronEmissionTomographyImageStorage, XRayAngiographicImageStorage)

# The same UIDs and Part 10 skeleton as the test series.
from ingest_perf.generate_series import derived_uid, part10_dataset

# name: (sop class, modality, count, rows, columns, frames, bits)
SHAPES = {
    "ct": (CTImageStorage, "CT", 373, 512, 512, 1, 16),
    "mammo": (DigitalMammographyXRayImageStorageForPresentation, "MG", 8, 7280, 7280, 1, 16),
    "cardio": (XRayAngiographicImageStorage, "XA", 26, 512, 512, 37, 8),
    "onco": (PositronEmissionTomographyImageStorage, "PT", 1635, 330, 330, 1, 16),
}

QUICK = {"ct": 60, "mammo": 2, "cardio": 6, "onco": 200}


def _write(path, name, index, sop_class, modality, rows, columns, frames, bits, pixels):
    ds = part10_dataset(path, sop_class, derived_uid(name, "instance", index))
    ds.StudyInstanceUID = derived_uid(name, "study")
    ds.SeriesInstanceUID = derived_uid(name, "series")
    ds.PatientName = "BENCH^" + name.upper()
    ds.PatientID = "BENCH-" + name
    ds.StudyDate = "20260101"
    ds.StudyID = "1"
    ds.AccessionNumber = "BENCH-" + name
    ds.Modality = modality
    ds.SeriesNumber = 1
    ds.InstanceNumber = index + 1
    ds.Rows = rows
    ds.Columns = columns
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    ds.BitsAllocated = bits
    ds.BitsStored = bits
    ds.HighBit = bits - 1
    ds.PixelRepresentation = 1 if bits == 16 else 0
    if frames > 1:
        ds.NumberOfFrames = frames
    ds.PixelData = pixels
    ds.save_as(path, write_like_original=False)


def write_dataset(folder, name, count=None, scale=1.0):
    """Writes dataset `name` into `folder` (once: an existing complete folder is reused).

    count: number of files (default: the published shape); scale: linear scale of rows and
    columns (mammo's scaled-down option). Returns the sorted file paths.
    """
    sop_class, modality, default_count, rows, columns, frames, bits = SHAPES[name]
    count = count or default_count
    rows = max(16, int(rows * scale))
    columns = max(16, int(columns * scale))
    os.makedirs(folder, exist_ok=True)
    marker = os.path.join(folder, ".complete-%d-%dx%d" % (count, rows, columns))
    paths = [os.path.join(folder, "%s%05d.dcm" % (name, i)) for i in range(count)]
    if os.path.exists(marker):
        return paths
    rng = np.random.default_rng(sum(map(ord, name)))
    dtype = np.int16 if bits == 16 else np.uint8
    high = 2000 if bits == 16 else 255
    base = rng.integers(0, high, size=(frames, rows, columns), dtype=dtype)
    for index, path in enumerate(paths):
        # Each file differs (rolled), so that nothing is deduplicated anywhere.
        pixels = np.roll(base, index, axis=1).tobytes()
        _write(path, name, index, sop_class, modality, rows, columns, frames, bits, pixels)
    open(marker, "w").close()
    return paths


def total_bytes(paths):
    return sum(os.path.getsize(p) for p in paths)
