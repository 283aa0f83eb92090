#include "Capture/DicomMetaHeader.h"

#include <cstring>

namespace IngestPerf
{
  namespace
  {
    uint16_t Read16(const unsigned char* p)
    {
      return static_cast<uint16_t>(p[0] | (p[1] << 8));
    }

    uint32_t Read32(const unsigned char* p)
    {
      return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
             (static_cast<uint32_t>(p[3]) << 24);
    }

    bool HasLongLength(const unsigned char* vr)
    {
      // PS3.5 7.1.2: these VRs have 2 reserved bytes and a 32-bit length.
      static const char* const kLong[] = {"OB", "OD", "OF", "OL", "OV", "OW", "SQ", "SV", "UC", "UN", "UR", "UT", "UV"};
      for (const char* candidate : kLong)
      {
        if (vr[0] == candidate[0] && vr[1] == candidate[1])
        {
          return true;
        }
      }
      return false;
    }
  }


  namespace
  {
    // Copies a UID value up to its first NUL (the padding; a label is a C string, so nothing after
    // a NUL can be part of it), without trailing spaces; an empty result for an empty value.
    // A value longer than any UID ends in "~" after its first kMaxUidLength - 1 characters, so that
    // no cut of it passes for a UID (LabelExposure withholds it).
    void CopyUid(char* target, const unsigned char* value, uint64_t length)
    {
      const size_t limit = static_cast<size_t>(length < kMaxUidLength + 2 ? length : kMaxUidLength + 2);
      const void* nul = memchr(value, '\0', limit);
      size_t n = nul == nullptr ? limit : static_cast<size_t>(static_cast<const unsigned char*>(nul) - value);
      while (n > 0 && value[n - 1] == ' ')
      {
        n--;
      }
      if (n > kMaxUidLength)
      {
        memcpy(target, value, kMaxUidLength - 1);
        target[kMaxUidLength - 1] = '~';
        target[kMaxUidLength] = '\0';
        return;
      }
      memcpy(target, value, n);
      target[n] = '\0';
    }
  }


  bool ReadMetaHeader(MetaHeader& header, const void* buffer, uint64_t size)
  {
    header.sopClass[0] = '\0';
    header.sopInstance[0] = '\0';
    header.transferSyntax[0] = '\0';
    const unsigned char* data = static_cast<const unsigned char*>(buffer);
    if (data == nullptr || size < 132 || memcmp(data + 128, "DICM", 4) != 0)
    {
      return false;
    }
    uint64_t offset = 132;
    for (int element = 0; element < 64 && offset + 8 <= size; element++)
    {
      const unsigned char* tagStart = data + offset;
      const uint16_t group = Read16(tagStart);
      const uint16_t tag = Read16(tagStart + 2);
      if (group != 0x0002 || tag > 0x0010)
      {
        break;  // past the three elements (the meta header is sorted by tag)
      }
      uint64_t length;
      uint64_t valueOffset;
      if (HasLongLength(tagStart + 4))
      {
        if (offset + 12 > size)
        {
          break;
        }
        length = Read32(tagStart + 8);
        valueOffset = offset + 12;
      }
      else
      {
        length = Read16(tagStart + 6);
        valueOffset = offset + 8;
      }
      if (valueOffset + length > size)
      {
        break;
      }
      if (tag == 0x0002)
      {
        CopyUid(header.sopClass, data + valueOffset, length);
      }
      else if (tag == 0x0003)
      {
        CopyUid(header.sopInstance, data + valueOffset, length);
      }
      else if (tag == 0x0010)
      {
        CopyUid(header.transferSyntax, data + valueOffset, length);
        break;
      }
      offset = valueOffset + length;
    }
    return header.transferSyntax[0] != '\0';
  }
}
