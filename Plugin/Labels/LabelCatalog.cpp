#include "Labels/LabelCatalog.h"

namespace IngestPerf
{
  namespace
  {
    bool IsFixed(LabelDimension dimension)
    {
      return dimension == LabelDimension::Transport || dimension == LabelDimension::SizeClass;
    }
  }


  LabelCatalog::LabelCatalog(size_t maxValuesPerLabel)
  {
    for (size_t d = 0; d < kLabelDimensions; d++)
    {
      if (!IsFixed(static_cast<LabelDimension>(d)))
      {
        dictionaries_[d].reset(new LabelDictionary(maxValuesPerLabel));
      }
    }
  }


  InstanceLabels LabelCatalog::Intern(Transport transport, const RawLabels& raw, uint64_t storedBytes)
  {
    InstanceLabels labels;
    labels.SetTransport(transport);
    labels.SetSizeClass(SizeClassOf(storedBytes));
    auto intern = [&](LabelDimension dimension, const char* value) {
      labels.Set(dimension, dictionaries_[static_cast<size_t>(dimension)]->Intern(value));
    };
    intern(LabelDimension::RemoteAet, raw.remoteAet);
    intern(LabelDimension::RemoteIp, raw.remoteIp);
    intern(LabelDimension::CalledAet, raw.calledAet);
    intern(LabelDimension::ReceivedSyntax, raw.receivedSyntax);
    intern(LabelDimension::StoredSyntax, raw.storedSyntax);
    intern(LabelDimension::SopClass, raw.sopClass);
    return labels;
  }


  InstanceLabels LabelCatalog::InternAbandoned(Transport transport, const char* receivedSyntax)
  {
    InstanceLabels labels;
    labels.SetTransport(transport);
    labels.Set(LabelDimension::ReceivedSyntax,
               dictionaries_[static_cast<size_t>(LabelDimension::ReceivedSyntax)]->Intern(receivedSyntax));
    return labels;
  }


  std::string LabelCatalog::Name(LabelDimension dimension, LabelId id) const
  {
    if (id == kOtherLabel)
    {
      return "(other)";
    }
    if (id == kNoneLabel)
    {
      return "(none)";
    }
    if (dimension == LabelDimension::Transport)
    {
      const size_t index = static_cast<size_t>(id - kFirstValueLabel);  // id >= kFirstValueLabel here
      return index < kTransportCount ? TransportName(static_cast<Transport>(index)) : "(other)";
    }
    if (dimension == LabelDimension::SizeClass)
    {
      const size_t index = static_cast<size_t>(id - kFirstValueLabel);
      return index < static_cast<size_t>(SizeClass::Count) ? SizeClassName(static_cast<SizeClass>(index)) : "(other)";
    }
    return dictionaries_[static_cast<size_t>(dimension)]->Name(id);
  }


  bool LabelCatalog::Find(LabelDimension dimension, const std::string& name, LabelId& id) const
  {
    if (dimension == LabelDimension::Transport)
    {
      Transport transport;
      if (ParseTransport(transport, name.c_str()))
      {
        id = static_cast<LabelId>(kFirstValueLabel + static_cast<size_t>(transport));
        return true;
      }
      return false;
    }
    if (dimension == LabelDimension::SizeClass)
    {
      for (size_t c = 0; c < static_cast<size_t>(SizeClass::Count); c++)
      {
        if (name == SizeClassName(static_cast<SizeClass>(c)))
        {
          id = static_cast<LabelId>(kFirstValueLabel + c);
          return true;
        }
      }
      return false;
    }
    return dictionaries_[static_cast<size_t>(dimension)]->Find(name, id);
  }


  const LabelDictionary* LabelCatalog::DictionaryOf(LabelDimension dimension) const
  {
    return dictionaries_[static_cast<size_t>(dimension)].get();
  }
}
