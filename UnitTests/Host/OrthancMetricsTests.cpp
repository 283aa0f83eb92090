#include "Host/OrthancMetrics.h"

#include <gtest/gtest.h>

using namespace IngestPerf;

TEST(OrthancMetrics, ReadsTheActiveRestRequestsOfOrthancsPrometheusText)
{
  // As Orthanc 1.10.1 and 1.12.7 write it (abridged).
  const std::string text = "# TYPE orthanc_count_instances gauge\n"
                           "orthanc_count_instances 12 1795435877963\n"
                           "orthanc_rest_api_active_requests 3 1795435877963\n"
                           "orthanc_rest_api_duration_ms 1 1795435877962\n";
  EXPECT_EQ(3, ParseActiveRestRequests(text));
  EXPECT_EQ(1, ParseActiveRestRequests("orthanc_rest_api_active_requests 1"));
  EXPECT_EQ(0, ParseActiveRestRequests("orthanc_rest_api_active_requests 0 5\r\n"));
}


TEST(OrthancMetrics, AnythingElseIsUnknown)
{
  EXPECT_EQ(-1, ParseActiveRestRequests(""));  // "MetricsEnabled": false answers nothing
  EXPECT_EQ(-1, ParseActiveRestRequests("orthanc_count_instances 12 1795435877963\n"));
  EXPECT_EQ(-1, ParseActiveRestRequests("orthanc_rest_api_active_requests_total 3 1\n"));
  EXPECT_EQ(-1, ParseActiveRestRequests("orthanc_rest_api_active_requests -1 1\n"));
  EXPECT_EQ(-1, ParseActiveRestRequests("orthanc_rest_api_active_requests 2.5 1\n"));
  EXPECT_EQ(-1, ParseActiveRestRequests("orthanc_rest_api_active_requests \n"));
  EXPECT_EQ(-1, ParseActiveRestRequests("orthanc_rest_api_active_requests 99999999999999999999999 1\n"));
  EXPECT_EQ(-1, ParseActiveRestRequests("# orthanc_rest_api_active_requests 3\n"));
}
