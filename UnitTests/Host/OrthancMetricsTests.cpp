#include "Host/OrthancMetrics.h"

#include <gtest/gtest.h>

#include <map>

using namespace IngestPerf;

TEST(OrthancMetrics, PublishedFiguresAreStoredCountsAndServerTotalQuantilesInSeconds)
{
  StatsSnapshot snapshot;
  TransportSnapshot& dicom = snapshot.transports[static_cast<size_t>(Transport::Dicom)];
  dicom.outcomes[static_cast<size_t>(Outcome::Stored)] = 3;
  Histogram serverTotal{};
  for (int64_t ms : {2, 2, 40})
  {
    serverTotal.Record(ms * 1000000);
  }
  dicom.phases[static_cast<size_t>(Phase::ServerTotal)] = serverTotal.Snapshot();

  const auto values = PublishedOrthancMetrics(snapshot);
  ASSERT_EQ(3 * kTransportCount, values.size());
  std::map<std::string, float> byName(values.begin(), values.end());
  EXPECT_EQ(3.0f, byName.at("orthanc_ingest_perf_dicom_stored_instances_since_start"));
  EXPECT_NEAR(0.002, byName.at("orthanc_ingest_perf_dicom_server_total_p50_seconds_since_start"), 0.00002);
  EXPECT_NEAR(0.040, byName.at("orthanc_ingest_perf_dicom_server_total_p99_seconds_since_start"), 0.0004);
  EXPECT_EQ(0.0f, byName.at("orthanc_ingest_perf_rest_stored_instances_since_start"));
  EXPECT_EQ(0.0f, byName.at("orthanc_ingest_perf_job_server_total_p99_seconds_since_start"));
}


TEST(OrthancMetrics, PublishedFiguresOfTheLastMinute)
{
  StatsSnapshot snapshot;
  WindowSnapshot lastMinute;
  lastMinute.coveredNs = 60 * int64_t(1000000000);
  TransportSnapshot& dicom = lastMinute.transports[static_cast<size_t>(Transport::Dicom)];
  dicom.outcomes[static_cast<size_t>(Outcome::Stored)] = 120;
  // 120 instances over the last 40 s of the minute: the rate is over the time they arrived in.
  dicom.firstStartNs = 120 * int64_t(1000000000);
  dicom.lastStoredNs = 160 * int64_t(1000000000);
  Histogram serverTotal{};
  Histogram gap{};
  for (int i = 0; i < 120; i++)
  {
    serverTotal.Record((i < 100 ? 3 : 50) * int64_t(1000000));
    gap.Record(20 * int64_t(1000000));
  }
  dicom.phases[static_cast<size_t>(Phase::ServerTotal)] = serverTotal.Snapshot();
  dicom.phases[static_cast<size_t>(Phase::AssociationGap)] = gap.Snapshot();

  EXPECT_EQ(3 * kTransportCount, PublishedOrthancMetrics(snapshot).size());  // no windows: since start only
  const auto values = PublishedOrthancMetrics(snapshot, &lastMinute);
  ASSERT_EQ(6 * kTransportCount + 1, values.size());
  std::map<std::string, float> byName(values.begin(), values.end());
  EXPECT_FLOAT_EQ(3.0f, byName.at("orthanc_ingest_perf_dicom_instances_per_second_1m"));
  EXPECT_NEAR(0.003, byName.at("orthanc_ingest_perf_dicom_server_total_p50_seconds_1m"), 0.00003);
  EXPECT_NEAR(0.050, byName.at("orthanc_ingest_perf_dicom_server_total_p99_seconds_1m"), 0.0005);
  EXPECT_NEAR(0.020, byName.at("orthanc_ingest_perf_dicom_association_gap_p50_seconds_1m"), 0.0002);
  EXPECT_EQ(0.0f, byName.at("orthanc_ingest_perf_rest_instances_per_second_1m"));
  EXPECT_EQ(0u, byName.count("orthanc_ingest_perf_rest_association_gap_p50_seconds_1m"));
}
