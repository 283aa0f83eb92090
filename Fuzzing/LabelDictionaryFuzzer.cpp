// LabelDictionary::Intern (Labels/LabelDictionary), through LabelCatalog (Labels/LabelCatalog):
// label values are outside input (calling AETs, addresses, UIDs of received files). The input's
// first byte chooses the capacity (1 to 64, so that a dictionary fills up, below and above the
// longest probe), the rest are values cut at '\n', interned as Orthanc lends them (C strings)
// until the dictionary is full and beyond. Checked against a plain map: the same value always
// gets the same id, different values different ids, ids stay within the capacity, "(other)" only
// once the dictionary has no room near the value (for a capacity within the longest probe: once
// it is full), "(none)" for an empty value, a value spelled like a reserved label is that label;
// names and REST filters find each id back. The catalog interns a calling AET escaped
// (LabelExposure): its ids are those of the dictionary fed with the escaped value.
#include "FuzzProperty.h"

#include "Labels/LabelCatalog.h"
#include "Labels/LabelDictionary.h"
#include "Labels/LabelExposure.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

using namespace IngestPerf;


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size == 0 || size > 16384)
  {
    return 0;
  }
  const size_t capacity = 1 + data[0] % 64;
  LabelDictionary dictionary(capacity);
  LabelCatalog catalog(capacity);
  std::map<std::string, LabelId> model;  // value (cut at kMaxValueLength) -> id
  std::set<LabelId> given;
  uint64_t overflowed = 0;

  for (const std::string& piece : Fuzzing::Split(data + 1, size - 1, '\n'))
  {
    const std::string sent = piece.c_str();  // a C string: a NUL byte ends it
    char escapedValue[LabelDictionary::kMaxValueLength];
    const std::string escaped(escapedValue, EscapeLabelValue(escapedValue, sizeof(escapedValue), sent.data(),
                                                             std::min(sent.size(), LabelDictionary::kMaxValueLength)));
    const char* value = escaped.c_str();
    const std::string cut = escaped;
    const LabelId id = dictionary.Intern(value);
    RawLabels raw;
    raw.remoteAet = sent.c_str();
    const LabelId catalogId = catalog.Intern(Transport::Dicom, raw, 0).Get(LabelDimension::RemoteAet);
    FUZZ_PROPERTY(catalogId == id);  // the catalog is the dictionary, one per dimension

    if (cut.empty() || cut == "(none)")
    {
      FUZZ_PROPERTY(id == kNoneLabel);
      continue;
    }
    if (cut == "(other)")
    {
      FUZZ_PROPERTY(id == kOtherLabel);  // spelled like the reserved label: that label, no slot
      continue;
    }
    const auto known = model.find(cut);
    if (id == kOtherLabel)
    {
      overflowed++;
      FUZZ_PROPERTY(known == model.end());  // a value with an id never loses it
      FUZZ_PROPERTY(capacity > LabelDictionary::kMaxProbe || dictionary.Size() == capacity);
      continue;
    }
    FUZZ_PROPERTY(id >= kFirstValueLabel && id < kFirstValueLabel + capacity);
    if (known != model.end())
    {
      FUZZ_PROPERTY(known->second == id);
    }
    else
    {
      FUZZ_PROPERTY(given.insert(id).second);  // a new value, a new id
      model[cut] = id;
    }
    FUZZ_PROPERTY(dictionary.Name(id) == cut);
    FUZZ_PROPERTY(catalog.Name(LabelDimension::RemoteAet, id) == cut);
    // The REST filter remoteAet=<the name shown> selects this very id.
    LabelId found = kOtherLabel;
    FUZZ_PROPERTY(catalog.Find(LabelDimension::RemoteAet, catalog.Name(LabelDimension::RemoteAet, id), found));
    FUZZ_PROPERTY(found == id);
  }

  FUZZ_PROPERTY(dictionary.Size() == model.size());
  FUZZ_PROPERTY(dictionary.Size() <= capacity);
  FUZZ_PROPERTY(dictionary.Overflowed() == overflowed);
  FUZZ_PROPERTY(dictionary.Contended() == 0);  // one thread: nothing is ever held
  for (const auto& entry : model)
  {
    FUZZ_PROPERTY(dictionary.Intern(entry.first.c_str()) == entry.second);  // ids are for good
  }
  return 0;
}
