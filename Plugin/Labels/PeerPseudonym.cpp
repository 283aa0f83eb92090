#include "Labels/PeerPseudonym.h"

#include "Platform/Hash.h"

#include <cstdio>

namespace IngestPerf
{
  bool IsPeerDimension(LabelDimension dimension)
  {
    return dimension == LabelDimension::RemoteAet || dimension == LabelDimension::RemoteIp ||
           dimension == LabelDimension::CalledAet;
  }


  std::string PeerPseudonym(const char* prefix, const std::string& value)
  {
    const uint64_t hash = Fnv1a(value.data(), value.size());
    char digits[9];
    snprintf(digits, sizeof(digits), "%08x", static_cast<unsigned int>(hash >> 32));
    return std::string(prefix) + "-" + digits;
  }


  bool IsPseudonym(LabelDimension dimension, const std::string& value)
  {
    if (!IsPeerDimension(dimension))
    {
      return false;
    }
    const std::string prefix = dimension == LabelDimension::RemoteIp ? "ip-" : "aet-";
    if (value.size() != prefix.size() + 8 || value.compare(0, prefix.size(), prefix) != 0)
    {
      return false;
    }
    return value.find_first_not_of("0123456789abcdef", prefix.size()) == std::string::npos;
  }


  std::string ExportedAddress(const std::string& address, bool hash)
  {
    return hash ? PeerPseudonym("ip", address) : address;
  }


  std::string ExportedLabelValue(LabelDimension dimension, const std::string& value, bool hash)
  {
    if (!hash || !IsPeerDimension(dimension) || value == "(none)" || value == "(other)")
    {
      return value;
    }
    return PeerPseudonym(dimension == LabelDimension::RemoteIp ? "ip" : "aet", value);
  }
}
