// ReadMetaHeader (Capture/DicomMetaHeader) and HasPart10Header (Capture/IngestHooks): the raw
// bytes of a received instance, read in ReceivedInstanceCallback before Orthanc parses anything.
// libFuzzer's buffer is exactly the input's size, so AddressSanitizer catches any read past it.
// Beyond that: both UIDs are NUL-terminated within their arrays, carry no trailing padding, are
// taken from the input itself (but for the "~" that marks a value cut to kMaxUidLength), and
// "found" means a Part 10 header with a transfer syntax.
#include "FuzzProperty.h"

#include "Capture/DicomMetaHeader.h"
#include "Capture/IngestHooks.h"

#include <cstring>

using namespace IngestPerf;

namespace
{
  // NUL-terminated inside the array, without trailing padding, and the bytes of the input after
  // the preamble (an empty UID trivially is).
  void CheckUid(const char (&uid)[kMaxUidLength + 1], const uint8_t* data, size_t size)
  {
    const void* end = memchr(uid, '\0', sizeof(uid));
    FUZZ_PROPERTY(end != nullptr);
    const size_t length = static_cast<const char*>(end) - uid;
    FUZZ_PROPERTY(length <= kMaxUidLength);
    if (length == 0)
    {
      return;
    }
    FUZZ_PROPERTY(uid[length - 1] != ' ');
    // A value too long for a UID is cut and marked with a final "~" (DicomMetaHeader's CopyUid),
    // so that no cut of it passes for a UID: the bytes before the mark are the input's.
    const bool cut = length == kMaxUidLength && uid[length - 1] == '~';
    const size_t own = cut ? length - 1 : length;
    FUZZ_PROPERTY(size > 132 && memmem(data + 132, size - 132, uid, own) != nullptr);
  }
}


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  MetaHeader header;
  memset(&header, 'x', sizeof(header));  // whatever the caller's stack held
  const bool found = ReadMetaHeader(header, data, size);
  const bool part10 = HasPart10Header(data, size);

  CheckUid(header.sopClass, data, size);
  CheckUid(header.transferSyntax, data, size);
  FUZZ_PROPERTY(found == (header.transferSyntax[0] != '\0'));
  FUZZ_PROPERTY(!found || part10);
  FUZZ_PROPERTY(part10 == (size >= 132 && memcmp(data + 128, "DICM", 4) == 0));
  if (!part10)
  {
    FUZZ_PROPERTY(header.sopClass[0] == '\0');
  }

  // The same bytes give the same answer (nothing read from outside them).
  MetaHeader again;
  FUZZ_PROPERTY(ReadMetaHeader(again, data, size) == found);
  FUZZ_PROPERTY(strcmp(again.sopClass, header.sopClass) == 0);
  FUZZ_PROPERTY(strcmp(again.transferSyntax, header.transferSyntax) == 0);
  return 0;
}
