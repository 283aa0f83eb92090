#include "Labels/LabelExposure.h"

#include "Vocabulary/DicomUids.h"

#include <cstring>

namespace IngestPerf
{
  namespace
  {
    constexpr size_t kMaxDicomUidLength = 64;

    // strcmp order on a counted value (the tables hold C strings).
    int Compare(const char* entry, const char* value, size_t length)
    {
      const int prefix = strncmp(entry, value, length);
      if (prefix != 0)
      {
        return prefix;
      }
      return entry[length] == '\0' ? 0 : 1;  // the entry is longer: after the value
    }

    bool InSortedTable(const char* const* table, size_t count, const char* value, size_t length)
    {
      size_t low = 0;
      size_t high = count;
      while (low < high)
      {
        const size_t middle = low + (high - low) / 2;
        const int order = Compare(table[middle], value, length);
        if (order == 0)
        {
          return true;
        }
        if (order < 0)
        {
          low = middle + 1;
        }
        else
        {
          high = middle;
        }
      }
      return false;
    }
  }


  bool IsUidDimension(LabelDimension dimension)
  {
    return dimension == LabelDimension::ReceivedSyntax || dimension == LabelDimension::StoredSyntax ||
           dimension == LabelDimension::SopClass;
  }


  bool IsDicomUid(const char* value, size_t length)
  {
    if (value == nullptr || length == 0 || length > kMaxDicomUidLength)
    {
      return false;
    }
    size_t componentStart = 0;
    for (size_t i = 0; i <= length; i++)
    {
      if (i == length || value[i] == '.')
      {
        const size_t componentLength = i - componentStart;
        if (componentLength == 0 || (componentLength > 1 && value[componentStart] == '0'))
        {
          return false;
        }
        componentStart = i + 1;
      }
      else if (value[i] < '0' || value[i] > '9')
      {
        return false;
      }
    }
    return true;
  }


  bool IsStandardUid(LabelDimension dimension, const char* value, size_t length)
  {
    if (dimension == LabelDimension::SopClass)
    {
      return InSortedTable(kSopClassUids, kSopClassUidsCount, value, length);
    }
    if (dimension == LabelDimension::ReceivedSyntax || dimension == LabelDimension::StoredSyntax)
    {
      return InSortedTable(kTransferSyntaxUids, kTransferSyntaxUidsCount, value, length);
    }
    return false;
  }


  const char* WithheldUidLabel(LabelDimension dimension, const char* value, size_t length)
  {
    if (length == sizeof(kUnknownLabel) - 1 && memcmp(value, kUnknownLabel, length) == 0)
    {
      return nullptr;
    }
    if (!IsDicomUid(value, length))
    {
      return kNotAUidLabel;
    }
    return IsStandardUid(dimension, value, length) ? nullptr : kUnlistedUidLabel;
  }


  size_t EscapeLabelValue(char* target, size_t capacity, const char* value, size_t length)
  {
    static const char kHex[] = "0123456789ABCDEF";
    size_t written = 0;
    for (size_t i = 0; i < length; i++)
    {
      const unsigned char byte = static_cast<unsigned char>(value[i]);
      if (byte >= 0x20 && byte < 0x7F && byte != '\\')
      {
        if (written + 1 > capacity)
        {
          break;
        }
        target[written++] = static_cast<char>(byte);
      }
      else
      {
        if (written + 4 > capacity)
        {
          break;
        }
        target[written++] = '\\';
        target[written++] = 'x';
        target[written++] = kHex[byte >> 4];
        target[written++] = kHex[byte & 0x0F];
      }
    }
    return written;
  }
}
