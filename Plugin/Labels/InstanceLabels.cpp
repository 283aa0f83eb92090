#include "Labels/InstanceLabels.h"

#include <cstring>

namespace IngestPerf
{
  namespace
  {
    const char* const kDimensionNames[kLabelDimensions] = {"transport",      "remoteAet",    "remoteIp", "calledAet",
                                                           "receivedSyntax", "storedSyntax", "sopClass", "sizeClass"};

    const char* const kSizeClassNames[static_cast<size_t>(SizeClass::Count)] = {"<64KiB", "64KiB-1MiB", "1-16MiB",
                                                                                "16-256MiB", ">=256MiB"};
  }


  const char* LabelDimensionName(LabelDimension dimension)
  {
    return kDimensionNames[static_cast<size_t>(dimension)];
  }


  bool ParseLabelDimension(LabelDimension& target, const char* name)
  {
    for (size_t i = 0; i < kLabelDimensions; i++)
    {
      if (strcmp(name, kDimensionNames[i]) == 0)
      {
        target = static_cast<LabelDimension>(i);
        return true;
      }
    }
    return false;
  }


  const char* SizeClassName(SizeClass sizeClass)
  {
    return kSizeClassNames[static_cast<size_t>(sizeClass)];
  }


  SizeClass SizeClassOf(uint64_t bytes)
  {
    if (bytes < (uint64_t(64) << 10))
    {
      return SizeClass::Under64KiB;
    }
    if (bytes < (uint64_t(1) << 20))
    {
      return SizeClass::Under1MiB;
    }
    if (bytes < (uint64_t(16) << 20))
    {
      return SizeClass::Under16MiB;
    }
    if (bytes < (uint64_t(256) << 20))
    {
      return SizeClass::Under256MiB;
    }
    return SizeClass::Larger;
  }


  InstanceLabels::InstanceLabels()
  {
    ids.fill(kNoneLabel);
  }


  void InstanceLabels::SetTransport(Transport transport)
  {
    Set(LabelDimension::Transport, static_cast<LabelId>(kFirstValueLabel + static_cast<size_t>(transport)));
  }


  void InstanceLabels::SetSizeClass(SizeClass sizeClass)
  {
    Set(LabelDimension::SizeClass, static_cast<LabelId>(kFirstValueLabel + static_cast<size_t>(sizeClass)));
  }


  Transport InstanceLabels::GetTransport() const
  {
    const LabelId id = Get(LabelDimension::Transport);
    return (id >= kFirstValueLabel && id < kFirstValueLabel + kTransportCount)
             ? static_cast<Transport>(id - kFirstValueLabel)
             : Transport::Plugin;
  }


  uint64_t InstanceLabels::Key() const
  {
    uint64_t key = 0;
    for (size_t i = 0; i < kLabelDimensions; i++)
    {
      key |= static_cast<uint64_t>(ids[i]) << (8 * i);
    }
    // (other) everywhere is all zeros: keep 0 for "empty slot".
    return key == 0 ? ~uint64_t(0) : key;
  }


  InstanceLabels InstanceLabels::FromKey(uint64_t key)
  {
    InstanceLabels labels;
    if (key == ~uint64_t(0))
    {
      labels.ids.fill(kOtherLabel);
      return labels;
    }
    for (size_t i = 0; i < kLabelDimensions; i++)
    {
      labels.ids[i] = static_cast<LabelId>((key >> (8 * i)) & 0xff);
    }
    return labels;
  }
}
