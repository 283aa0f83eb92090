#include "Labels/LabelCatalog.h"

#include "Labels/LabelExposure.h"
#include "Platform/MonotonicClock.h"

#include <algorithm>
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
    const uint32_t generation = Generation();
    InstanceLabels labels;
    labels.SetTransport(transport);
    labels.SetSizeClass(SizeClassOf(storedBytes));
    auto intern = [&](LabelDimension dimension, const char* value, LabelId known = kUnidentified) {
      if (known != kUnidentified && (identified.current || value == nullptr))
      {
        labels.Set(dimension, identified.current ? known : kOtherLabel);
      }
      else
      {
        labels.Set(dimension, InternValue(dimension, value));
      }
    };
    intern(LabelDimension::RemoteAet, raw.remoteAet, identified.remoteAet);
    intern(LabelDimension::RemoteIp, raw.remoteIp, identified.remoteIp);
    intern(LabelDimension::CalledAet, raw.calledAet, identified.calledAet);
    intern(LabelDimension::ReceivedSyntax, raw.receivedSyntax);
    intern(LabelDimension::StoredSyntax, raw.storedSyntax);
    intern(LabelDimension::SopClass, raw.sopClass);
    labels.generation = Stamp(generation);
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


  uint32_t LabelCatalog::Stamp(uint32_t before) const
  {
    // Interned while the tables turned (odd), or across a turn: which table each id is of is not known.
    return (before % 2 == 0 && Generation() == before) ? before : kAmbiguousGeneration;
  }


  InstanceLabels LabelCatalog::InternEnded(Transport transport, const IdentifiedLabels& given)
  {
    const uint32_t generation = Generation();
    IdentifiedLabels identified = given;
    if (!identified.current)
    {
      // Interned in the tables of before: counted under "(other)", never under another name.
      for (LabelId* id : {&identified.remoteAet, &identified.remoteIp, &identified.calledAet})
      {
        *id = *id != kUnidentified ? kOtherLabel : kUnidentified;
      }
    }
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
    labels.generation = Stamp(generation);
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


  std::string LabelCatalog::Name(LabelDimension dimension, LabelId id, uint32_t generation) const
  {
    const uint32_t current = Generation();
    if (IsFixed(dimension) || id == kOtherLabel || id == kNoneLabel || generation == current)
    {
      return Name(dimension, id);
    }
    if (generation + 2 == current || generation + 1 == current)  // the tables of before, or being turned
    {
      return dictionaries_[static_cast<size_t>(dimension)]->Name(id, true);
    }
    return "(other)";  // aged out twice (its table was emptied), or interned while they turned
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


  namespace
  {
    // The values' clock, in whole seconds (LabelDictionary::MarkUsed).
    uint32_t EpochOf(int64_t ns)
    {
      return ns <= 0                                         ? 0
             : ns / 1000000000 >= LabelDictionary::kKeepNone ? LabelDictionary::kKeepNone - 1
                                                             : static_cast<uint32_t>(ns / 1000000000);
    }
  }


  void LabelCatalog::Turn(bool clear, int64_t keepUsedSinceNs)
  {
    const uint32_t keepSince = keepUsedSinceNs == INT64_MAX ? LabelDictionary::kKeepNone : EpochOf(keepUsedSinceNs);
    generation_.fetch_add(1, std::memory_order_acq_rel);  // odd: an Intern meanwhile is ambiguous
    for (const auto& dictionary : dictionaries_)
    {
      if (dictionary)
      {
        clear ? dictionary->Clear() : dictionary->Rotate(keepSince);
      }
    }
    generation_.fetch_add(1, std::memory_order_acq_rel);
    // Read after the tables turned: what interns an id after this time interns it in the new ones.
    currentSinceNs_.store(MonotonicNowNs(), std::memory_order_release);
  }


  void LabelCatalog::Clear()
  {
    Turn(true);
    rotations_.store(0, std::memory_order_relaxed);
  }


  void LabelCatalog::Rotate(int64_t keepUsedSinceNs)
  {
    Turn(false, keepUsedSinceNs);
    rotations_.fetch_add(1, std::memory_order_relaxed);
  }


  bool LabelCatalog::Kept(const InstanceLabels& labels) const
  {
    for (size_t d = 0; d < kLabelDimensions; d++)
    {
      const LabelId id = labels.ids[d];
      if (dictionaries_[d] && id >= kFirstValueLabel && id != kUnidentified && !dictionaries_[d]->Kept(id))
      {
        return false;
      }
    }
    return true;
  }


  void LabelCatalog::MarkUsed(const InstanceLabels& labels, int64_t atNs)
  {
    if (labels.generation != Generation())
    {
      return;  // its ids may name other values now
    }
    for (size_t d = 0; d < kLabelDimensions; d++)
    {
      if (dictionaries_[d])
      {
        dictionaries_[d]->MarkUsed(labels.ids[d], EpochOf(atNs));
      }
    }
  }


  double LabelCatalog::MostFilled() const
  {
    double most = 0;
    for (const auto& dictionary : dictionaries_)
    {
      if (dictionary)
      {
        most = std::max(most, static_cast<double>(dictionary->Size()) / static_cast<double>(dictionary->Capacity()));
      }
    }
    return most;
  }


  const LabelDictionary* LabelCatalog::DictionaryOf(LabelDimension dimension) const
  {
    return dictionaries_[static_cast<size_t>(dimension)].get();
  }
}
