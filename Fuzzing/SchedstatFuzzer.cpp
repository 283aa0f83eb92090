// ParseSchedstatRunDelay (Platform/ThreadClocks): the text of /proc/thread-self/schedstat, "<cpu ns>
// <run delay ns> <timeslices>\n", read at every bound of a split instance's phases. The input is
// copied to a buffer of exactly its size, so that AddressSanitizer catches any read past it. Beyond
// that, checked against a reference written apart (split on single spaces, std::stoull): a text is
// accepted exactly when it is three unsigned decimal numbers of at most 9223372036854775799 (the
// parser's bound: it refuses a digit that could overflow), one space apart, with at most one newline
// after them, and the run delay is the second number.
#include "FuzzProperty.h"

#include "Platform/ThreadClocks.h"

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace IngestPerf;

namespace
{
  bool Reference(const std::string& text, int64_t& delay)
  {
    std::string body = text;
    if (!body.empty() && body.back() == '\n')
    {
      body.pop_back();
    }
    std::vector<std::string> fields;
    size_t start = 0;
    for (;;)
    {
      const size_t space = body.find(' ', start);
      fields.push_back(body.substr(start, space == std::string::npos ? std::string::npos : space - start));
      if (space == std::string::npos)
      {
        break;
      }
      start = space + 1;
    }
    if (fields.size() != 3)
    {
      return false;
    }
    std::vector<unsigned long long> values;
    for (const std::string& field : fields)
    {
      if (field.empty() || field.find_first_not_of("0123456789") != std::string::npos)
      {
        return false;
      }
      try
      {
        values.push_back(std::stoull(field));
      }
      catch (const std::out_of_range&)
      {
        return false;
      }
      if (values.back() > 9223372036854775799ull)
      {
        return false;
      }
    }
    if (values[0] == 0)
    {
      return false;  // a kernel without sched_info prints "0 0 0"
    }
    delay = static_cast<int64_t>(values[1]);
    return true;
  }
}


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  std::unique_ptr<char[]> text(new char[size == 0 ? 1 : size]);
  memcpy(text.get(), data, size);
  int64_t delay = -7;
  const bool accepted = ParseSchedstatRunDelay(text.get(), size, delay);
  int64_t expected = -7;
  const bool valid = Reference(std::string(reinterpret_cast<const char*>(data), size), expected);
  FUZZ_PROPERTY(accepted == valid);
  FUZZ_PROPERTY(delay == expected);  // the run delay, or untouched on refusal
  return 0;
}
