// ParseReceptionDate (Recording/DuplicateDetection): Orthanc's "ReceptionDate" metadata,
// "YYYYMMDDTHHMMSS" in UTC. The input is the C string (up to its first NUL), copied to a buffer
// of exactly its length plus the NUL, so that AddressSanitizer catches any read past it. Beyond
// that, checked against the C library (timegm, gmtime_r): a string is accepted exactly when it
// is a real UTC date and time in that form, and the seconds it gives print back as the same
// string.
#include "FuzzProperty.h"

#include "Recording/DuplicateDetection.h"

#include <cstring>
#include <ctime>
#include <memory>
#include <string>

using namespace IngestPerf;

namespace
{
  bool HasTheForm(const char* text)
  {
    if (strlen(text) != 15 || text[8] != 'T')
    {
      return false;
    }
    for (int i = 0; i < 15; i++)
    {
      if (i != 8 && (text[i] < '0' || text[i] > '9'))
      {
        return false;
      }
    }
    return true;
  }

  // What gmtime_r prints for `seconds`, in Orthanc's form.
  std::string Print(int64_t seconds)
  {
    const time_t t = static_cast<time_t>(seconds);
    struct tm parts = {};
    if (gmtime_r(&t, &parts) == nullptr)
    {
      return "";
    }
    char text[32];
    snprintf(text, sizeof(text), "%04d%02d%02dT%02d%02d%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
             parts.tm_hour, parts.tm_min, parts.tm_sec);
    return text;
  }

  // A real date and time: timegm normalises nothing away (no 31st of April, no 25th hour).
  bool IsRealDate(const char* text)
  {
    auto number = [&](int offset, int digits) {
      int value = 0;
      for (int i = 0; i < digits; i++)
      {
        value = value * 10 + (text[offset + i] - '0');
      }
      return value;
    };
    struct tm parts = {};
    parts.tm_year = number(0, 4) - 1900;
    parts.tm_mon = number(4, 2) - 1;
    parts.tm_mday = number(6, 2);
    parts.tm_hour = number(9, 2);
    parts.tm_min = number(11, 2);
    parts.tm_sec = number(13, 2);
    struct tm normalised = parts;
    timegm(&normalised);
    return normalised.tm_year == parts.tm_year && normalised.tm_mon == parts.tm_mon &&
           normalised.tm_mday == parts.tm_mday && normalised.tm_hour == parts.tm_hour &&
           normalised.tm_min == parts.tm_min && normalised.tm_sec == parts.tm_sec;
  }
}


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  const size_t length = strnlen(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<char[]> text(new char[length + 1]);
  memcpy(text.get(), data, length);
  text[length] = '\0';

  int64_t seconds = -12345;
  const bool accepted = ParseReceptionDate(seconds, text.get());
  if (!accepted)
  {
    FUZZ_PROPERTY(seconds == -12345);  // untouched on refusal
  }
  const bool valid = HasTheForm(text.get()) && IsRealDate(text.get());
  FUZZ_PROPERTY(accepted == valid);
  if (accepted)
  {
    FUZZ_PROPERTY(Print(seconds) == text.get());
  }
  return 0;
}
