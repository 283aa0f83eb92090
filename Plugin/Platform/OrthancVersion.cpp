#include "Platform/OrthancVersion.h"

#include <cstdio>

namespace IngestPerf
{
  OrthancVersion OrthancVersion::Parse(const std::string& text)
  {
    OrthancVersion version;
    int major = 0;
    int minor = 0;
    int revision = 0;
    char rest = 0;
    if (sscanf(text.c_str(), "%d.%d.%d%c", &major, &minor, &revision, &rest) == 3 && major >= 0 && minor >= 0 &&
        revision >= 0)
    {
      version.major = major;
      version.minor = minor;
      version.revision = revision;
    }
    else
    {
      version.major = 999;  // a development build ("mainline"): the newest behaviour
      version.minor = 0;
      version.revision = 0;
    }
    return version;
  }


  bool OrthancVersion::AtLeast(int wantedMajor, int wantedMinor, int wantedRevision) const
  {
    if (major != wantedMajor)
    {
      return major > wantedMajor;
    }
    if (minor != wantedMinor)
    {
      return minor > wantedMinor;
    }
    return revision >= wantedRevision;
  }


  std::string OrthancVersion::ToString() const
  {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(revision);
  }
}
