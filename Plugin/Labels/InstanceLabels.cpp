#include "Labels/InstanceLabels.h"

namespace IngestPerf
{
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
      key |= static_cast<uint64_t>(ids[i]) << (kLabelIdBits * i);
    }
    // (other) everywhere is all zeros: keep 0 for "empty slot".
    return key == 0 ? ~uint64_t(0) : key;
  }


  InstanceLabels InstanceLabels::Overflow(Transport transport)
  {
    InstanceLabels labels;
    labels.ids.fill(kOtherLabel);
    labels.SetTransport(transport);
    return labels;
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
      labels.ids[i] = static_cast<LabelId>((key >> (kLabelIdBits * i)) & LabelId(~LabelId(0)));
    }
    return labels;
  }
}
