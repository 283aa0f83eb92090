#include "Labels/LabelCatalog.h"

#include "Labels/LabelExposure.h"

#include <cstring>

namespace IngestPerf
{
  namespace
  {
    bool IsFixed(LabelDimension dimension)
    {
      return dimension == LabelDimension::Transport || dimension == LabelDimension::SizeClass;
    }

    class UidAdmission : public LabelAdmission
    {
    public:
      explicit UidAdmission(LabelDimension dimension) :
        dimension_(dimension)
      {
      }

      const char* StandIn(const char* value, size_t length) const override
      {
        return WithheldUidLabel(dimension_, value, length);
      }

    private:
      LabelDimension dimension_;
    };
  }


  LabelCatalog::LabelCatalog(size_t maxValuesPerLabel)
  {
    for (size_t d = 0; d < kLabelDimensions; d++)
    {
      const LabelDimension dimension = static_cast<LabelDimension>(d);
      if (IsUidDimension(dimension))
      {
        admissions_[d].reset(new UidAdmission(dimension));
      }
      if (!IsFixed(dimension))
      {
        dictionaries_[d].reset(new LabelDictionary(maxValuesPerLabel, admissions_[d].get()));
      }
    }
  }


  InstanceLabels LabelCatalog::Intern(Transport transport, const RawLabels& raw, uint64_t storedBytes,
                                      const IdentifiedLabels& identified)
  {
    InstanceLabels labels;
    labels.SetTransport(transport);
    labels.SetSizeClass(SizeClassOf(storedBytes));
    auto intern = [&](LabelDimension dimension, const char* value, LabelId known = kUnidentified) {
      labels.Set(dimension, known != kUnidentified ? known : InternValue(dimension, value));
    };
    intern(LabelDimension::RemoteAet, raw.remoteAet, identified.remoteAet);
    intern(LabelDimension::RemoteIp, raw.remoteIp, identified.remoteIp);
    intern(LabelDimension::CalledAet, raw.calledAet, identified.calledAet);
    intern(LabelDimension::ReceivedSyntax, raw.receivedSyntax);
    intern(LabelDimension::StoredSyntax, raw.storedSyntax);
    intern(LabelDimension::SopClass, raw.sopClass);
    return labels;
  }


  LabelId LabelCatalog::InternValue(LabelDimension dimension, const char* value)
  {
    LabelDictionary* dictionary = dictionaries_[static_cast<size_t>(dimension)].get();
    if (dictionary == nullptr)
    {
      return kOtherLabel;
    }
    if (value == nullptr)
    {
      return kNoneLabel;
    }
    if (IsUidDimension(dimension))
    {
      // A value longer than any UID is seen as such by the admission, which refuses it.
      return dictionary->Intern(value, strnlen(value, LabelDictionary::kMaxValueLength + 1));
    }
    // AETs and addresses: valid UTF-8 from here on, whatever bytes the sender used.
    char escaped[LabelDictionary::kMaxValueLength];
    const size_t length =
      EscapeLabelValue(escaped, sizeof(escaped), value, strnlen(value, LabelDictionary::kMaxValueLength));
    return dictionary->Intern(escaped, length);
  }


  InstanceLabels LabelCatalog::InternEnded(Transport transport, const IdentifiedLabels& identified)
  {
    InstanceLabels labels;
    labels.SetTransport(transport);
    if (identified.remoteAet != kUnidentified)
    {
      labels.Set(LabelDimension::RemoteAet, identified.remoteAet);
    }
    else if (transport == Transport::Dicom)
    {
      labels.Set(LabelDimension::RemoteAet, InternValue(LabelDimension::RemoteAet, "(unknown)"));
    }
    if (identified.remoteIp != kUnidentified)
    {
      labels.Set(LabelDimension::RemoteIp, identified.remoteIp);
    }
    if (identified.calledAet != kUnidentified)
    {
      labels.Set(LabelDimension::CalledAet, identified.calledAet);
    }
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


  void LabelCatalog::Clear()
  {
    for (const auto& dictionary : dictionaries_)
    {
      if (dictionary)
      {
        dictionary->Clear();
      }
    }
  }


  const LabelDictionary* LabelCatalog::DictionaryOf(LabelDimension dimension) const
  {
    return dictionaries_[static_cast<size_t>(dimension)].get();
  }
}
