#include "Capture/StorageRoot.h"
#include "Metrics/StorageStats.h"
#include "Platform/Configuration.h"
#include "Timeline/InstanceTimeline.h"

#include <gtest/gtest.h>

#include <json/value.h>

#include <set>
#include <vector>

using namespace IngestPerf;

namespace
{
  constexpr int64_t kMs = 1000000;

  class CompletedSink : public TimelineSink
  {
  public:
    std::vector<CompletedInstance> completed;
    void InstanceCompleted(const CompletedInstance& instance) override { completed.push_back(instance); }
    void RecordEnded(const EndedRecord&) override {}
  };

  StoredEvent StoredAt(int64_t nowNs)
  {
    StoredEvent event{};
    event.nowNs = nowNs;
    event.transport = Transport::Dicom;
    event.receptionSecond = -1;
    return event;
  }
}


TEST(StorageRoot, ResolvedLikeOrthanc)
{
  const std::set<std::string> folders = {"/etc/orthanc", "/etc/orthanc/", "conf.d"};
  auto isDirectory = [&](const std::string& path) { return folders.count(path) != 0; };
  // No configuration: the working directory.
  EXPECT_EQ("/srv/run/OrthancStorage", ResolveStorageRoot("", "", "/srv/run", isDirectory));
  // A folder of configuration files (Debian's service passes /etc/orthanc): that folder.
  EXPECT_EQ("/etc/orthanc/db", ResolveStorageRoot("/etc/orthanc", "db", "/", isDirectory));
  EXPECT_EQ("/etc/orthanc/db", ResolveStorageRoot("/etc/orthanc/", "db", "/", isDirectory));
  // A configuration file given relative to the working directory: its folder.
  EXPECT_EQ("/home/u/cfg/storage", ResolveStorageRoot("cfg/orthanc.json", "storage", "/home/u", isDirectory));
  EXPECT_EQ("/home/u/storage", ResolveStorageRoot("orthanc.json", "storage", "/home/u", isDirectory));
  EXPECT_EQ("/home/u/conf.d/s", ResolveStorageRoot("conf.d", "s", "/home/u", isDirectory));
  // An absolute StorageDirectory wins.
  EXPECT_EQ("/var/lib/orthanc/db", ResolveStorageRoot("/etc/orthanc", "/var/lib/orthanc/db", "/", isDirectory));
  EXPECT_EQ("/var/lib/orthanc/db", ResolveStorageRoot("/etc/orthanc", "/var/lib/orthanc/./x/../db", "/", isDirectory));
}


TEST(StorageTimeline, CreatesSplitPersist)
{
  InstanceTimeline timeline;
  CompletedSink sink;
  timeline.Received(kMs, Transport::Dicom, 10, true, nullptr, sink);
  timeline.StorageCreated(kMs, 2 * kMs);  // before the filters: not the instance's file
  timeline.Filtered(3 * kMs, Transport::Dicom, sink);
  timeline.StorageCreated(4 * kMs, 6 * kMs);
  timeline.StorageCreated(7 * kMs, 8 * kMs);  // DicomUntilPixelData (with StorageCompression)
  timeline.Stored(StoredAt(11 * kMs), sink);
  ASSERT_EQ(1u, sink.completed.size());
  const CompletedInstance& c = sink.completed[0];
  EXPECT_EQ(4 * kMs, c.firstCreateStartNs);
  EXPECT_EQ(8 * kMs, c.lastCreateEndNs);
  EXPECT_EQ(3 * kMs, c.createTotalNs);
  EXPECT_FALSE(c.removedAfterCreate);
  // storagePrepare 1 + storageWrite 3 + indexUpdate 3 <= persist 8 (the 1 ms between the creates)
}


TEST(StorageTimeline, RemoveAfterCreateMarksTheDuplicate)
{
  InstanceTimeline timeline;
  CompletedSink sink;
  timeline.Received(kMs, Transport::Dicom, 10, true, nullptr, sink);
  timeline.Filtered(2 * kMs, Transport::Dicom, sink);
  timeline.StorageRemoved();  // a remove without a create of this instance: unrelated
  timeline.StorageCreated(3 * kMs, 4 * kMs);
  timeline.StorageRemoved();
  timeline.Stored(StoredAt(5 * kMs), sink);
  ASSERT_EQ(1u, sink.completed.size());
  EXPECT_TRUE(sink.completed[0].removedAfterCreate);
  // The next instance starts clean.
  timeline.Received(6 * kMs, Transport::Dicom, 10, true, nullptr, sink);
  timeline.Filtered(7 * kMs, Transport::Dicom, sink);
  timeline.Stored(StoredAt(9 * kMs), sink);
  EXPECT_FALSE(sink.completed[1].removedAfterCreate);
  EXPECT_EQ(0, sink.completed[1].firstCreateStartNs);
}


TEST(StorageStats, RecordsPerOperation)
{
  StorageStats stats;
  stats.Record(StorageOperation::Create, 2 * kMs, 1000000);
  stats.Record(StorageOperation::Create, 4 * kMs, 3000000);
  stats.RecordFailure(StorageOperation::ReadWhole);
  auto snapshot = stats.Snapshot();
  EXPECT_EQ(2u, snapshot[0].durations.Count());
  EXPECT_EQ(4000000u, snapshot[0].bytes);
  EXPECT_EQ(1u, snapshot[1].failures);
  stats.Reset();
  snapshot = stats.Snapshot();
  EXPECT_EQ(0u, snapshot[0].durations.Count());
  EXPECT_EQ(0u, snapshot[1].failures);
  EXPECT_STREQ("readRange", StorageOperationName(StorageOperation::ReadRange));
}


TEST(StorageConfiguration, OrthancOptionsAndOtherStoragePlugins)
{
  Json::Value config;
  config["StorageDirectory"] = "/data";
  config["SyncStorageArea"] = false;
  config["StoreDicom"] = false;
  config["IngestPerf"]["TimedStorage"] = true;
  Configuration parsed = ParseConfiguration(config);
  EXPECT_TRUE(parsed.timedStorage);
  EXPECT_EQ("/data", parsed.storageDirectory);
  EXPECT_FALSE(parsed.syncStorageArea);
  EXPECT_FALSE(parsed.storeDicom);
  EXPECT_EQ("", parsed.storagePluginSection);

  config["PostgreSQL"]["EnableIndex"] = true;
  EXPECT_EQ("", FindStoragePluginSection(config));  // the index alone keeps files on disk
  config["PostgreSQL"]["EnableStorage"] = true;
  EXPECT_EQ("PostgreSQL.EnableStorage", FindStoragePluginSection(config));
  Json::Value s3;
  s3["AwsS3Storage"]["BucketName"] = "b";
  EXPECT_EQ("AwsS3Storage", FindStoragePluginSection(s3));

  Json::Value bad;
  bad["IngestPerf"]["TimedStorage"] = "yes";
  EXPECT_THROW(ParseConfiguration(bad), ConfigurationError);
}
