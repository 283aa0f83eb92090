// What of a value from outside the plugin (an AET, an address, a UID read from a DICOM file) may
// leave it as a label: decided here, once, as the value is interned (LabelCatalog::InternValue),
// so that every answer (JSON, Prometheus text, the page, the report) shows the same name.
// - receivedSyntax, storedSyntax, sopClass: a UID of the DICOM standard (a transfer syntax, a SOP
//   class) is shown as it is. Any other value is withheld, whatever it holds (a patient's name or
//   ID in a broken file): "(unlisted UID)" for a well-formed UID the standard does not define (a
//   vendor's private SOP class), "(not a UID)" for anything else.
// - The other labels (AETs, addresses): bytes outside printable ASCII, and the backslash, are
//   written "\xHH" (two upper-case hex digits): always valid UTF-8, visible and reversible.
// No allocation, bounded work: it runs inside Orthanc's callbacks.
#pragma once

#include "Labels/InstanceLabels.h"

#include <cstddef>

namespace IngestPerf
{
  // The label value of an SDK call that failed (errors.sdkCallsFailed): shown in every dimension.
  constexpr char kUnknownLabel[] = "(unknown)";
  constexpr char kNotAUidLabel[] = "(not a UID)";
  constexpr char kUnlistedUidLabel[] = "(unlisted UID)";

  // The labels whose values are UIDs read from inside the instance.
  bool IsUidDimension(LabelDimension dimension);

  // A UID by the DICOM grammar (PS3.5 9.1): 1 to 64 characters, components of digits separated by
  // single dots, no component with a leading zero other than "0" itself.
  bool IsDicomUid(const char* value, size_t length);

  // A transfer syntax (receivedSyntax, storedSyntax) or SOP class (sopClass) the standard defines.
  bool IsStandardUid(LabelDimension dimension, const char* value, size_t length);

  // nullptr when `value` may be shown as the label of a UID dimension (a standard UID, or
  // kUnknownLabel), else the name that stands for it: kUnlistedUidLabel or kNotAUidLabel.
  const char* WithheldUidLabel(LabelDimension dimension, const char* value, size_t length);

  // Writes `value` escaped (see above) into `target`, at most `capacity` bytes, never cutting an
  // escape in two; returns the bytes written. Not NUL-terminated.
  size_t EscapeLabelValue(char* target, size_t capacity, const char* value, size_t length);
}
