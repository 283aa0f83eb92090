// What Orthanc's own metrics say that the plugin cannot see: how many REST API requests Orthanc is
// serving. Orthanc counts a request in "orthanc_rest_api_active_requests" from the start of its
// handler to its answer, for its own routes (POST /instances among them) and its internal calls
// (this reading is one), not for the routes of plugins. No Orthanc up to 1.12.7 tells a plugin when
// a request ends; this count, when it is 0, tells that every request ingesting through the REST API
// is over, so that a record its thread left open (a body Orthanc could not parse, a failed store)
// has its outcome at once instead of when that thread serves its next request.
#pragma once

#include <cstdint>
#include <string>

namespace IngestPerf
{
  // The value of orthanc_rest_api_active_requests in Orthanc's Prometheus text, -1 when absent or
  // malformed.
  int64_t ParseActiveRestRequests(const std::string& prometheusText);

  // REST API requests in progress besides this reading, -1 when Orthanc cannot say ("MetricsEnabled"
  // false, or the metric is missing).
  int64_t OtherRestRequestsInProgress();
}
