#include "Host/OrthancMetrics.h"

#include "Host/OrthancSdk.h"

#include <cstring>

namespace IngestPerf
{
  namespace
  {
    const char kActiveRequests[] = "orthanc_rest_api_active_requests";
  }


  int64_t ParseActiveRestRequests(const std::string& prometheusText)
  {
    const size_t nameLength = sizeof(kActiveRequests) - 1;
    size_t line = 0;
    while (line < prometheusText.size())
    {
      size_t end = prometheusText.find('\n', line);
      if (end == std::string::npos)
      {
        end = prometheusText.size();
      }
      // "name value [timestamp]": the name alone, then a space, then digits.
      if (end - line > nameLength + 1 && prometheusText.compare(line, nameLength, kActiveRequests) == 0 &&
          prometheusText[line + nameLength] == ' ')
      {
        int64_t value = 0;
        size_t i = line + nameLength + 1;
        const size_t first = i;
        while (i < end && prometheusText[i] >= '0' && prometheusText[i] <= '9' && i - first < 18)
        {
          value = value * 10 + (prometheusText[i] - '0');
          i++;
        }
        const bool ended = (i == end || prometheusText[i] == ' ' || prometheusText[i] == '\r');
        return (i > first && ended) ? value : -1;
      }
      line = end + 1;
    }
    return -1;
  }


  int64_t OtherRestRequestsInProgress()
  {
    std::string text;
    if (!OrthancSdk::RestApiGet("/tools/metrics-prometheus", text))
    {
      return -1;
    }
    const int64_t active = ParseActiveRestRequests(text);
    // This internal GET is one of them.
    return active >= 1 ? active - 1 : -1;
  }
}
