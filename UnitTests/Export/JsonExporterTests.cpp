#include "Recording/IngestRecorder.h"
#include "Metrics/IngestStats.h"
#include "Timeline/InstanceTimeline.h"
#include "Export/JsonExporter.h"
#include "StatsDocument.h"
#include "Metrics/StreamTable.h"
#include "Labels/PeerPseudonym.h"

#include <gtest/gtest.h>
#include <json/writer.h>

#include <thread>

using namespace IngestPerf;

namespace
{
  constexpr int64_t kMs = 1000000;

  PluginStatus MakeStatus(bool receivedInstance)
  {
    PluginStatus status;
    status.pluginVersion = "test";
    status.orthancVersion = "1.10.1";
    for (HookState* hook : {&status.hooks.httpRequestFilter, &status.hooks.instanceFilter, &status.hooks.storedInstance,
                            &status.hooks.change})
    {
      hook->registered = true;
    }
    if (receivedInstance)
    {
      status.hooks.receivedInstance.Set(ReceivedInstanceHook::State::Held);
    }
    else
    {
      status.hooks.receivedInstance.Leave("Orthanc also loads libSite.so");
    }
    status.hooks.transcoder.reason = "IngestTranscoding is not configured";
    return status;
  }

  CompletedInstance Instance(Transport transport, int64_t start, int64_t received, int64_t filtered, int64_t stored)
  {
    CompletedInstance c{};
    c.transport = transport;
    c.hasTimeline = true;
    c.hasReceivePhase = transport != Transport::Dicom;
    c.segmentStartNs = start;
    c.receivedNs = received;
    c.filteredNs = filtered;
    c.storedNs = stored;
    c.receivedBytes = 1000;
    c.storedBytes = 1000;
    return c;
  }

  // Stats with a label catalog, fed like the recorder does.
  struct LabelledStats
  {
    LabelCatalog catalog{8};
    IngestStats stats{0, 0, 64};

    void Stored(const CompletedInstance& instance, int64_t gap, const char* aet = nullptr,
                const char* syntax = "1.2.840.10008.1.2.1", const char* ip = nullptr, const char* calledAet = nullptr)
    {
      RawLabels raw;
      raw.remoteAet = aet;
      raw.storedSyntax = syntax;
      raw.remoteIp = ip;
      raw.calledAet = calledAet;
      stats.RecordStored(Measure(instance, gap), catalog.Intern(instance.transport, raw, instance.storedBytes));
    }

    void Outcome(Transport transport, IngestPerf::Outcome outcome)
    {
      stats.RecordOutcome(outcome, catalog.InternEnded(transport, IdentifiedLabels()));
    }
  };

  Json::Value Export(const LabelledStats& source, const PluginStatus& status, const StatsQuery& filter = StatsQuery(),
                     const PluginCost* cost = nullptr, bool running = true,
                     const PluginThreadCost& watcher = PluginThreadCost())
  {
    IngestReport report;
    report.status = &status;
    report.collected = running;  // a running pipeline: its other sections empty
    report.snapshot = source.stats.Snapshot(10000 * kMs);
    report.openRecords.count = 1;
    report.openRecords.oldestStartNs = 9000 * kMs;
    report.openRecords.threadsTracked = 3;
    report.catalog = &source.catalog;
    if (filter.UsesStreams())
    {
      report.grouped = source.stats.SnapshotGrouped(MakeStreamPredicate(filter, source.catalog), filter.GroupBy());
    }
    report.streams = StreamInfo{64, source.stats.Streams().Used(), 0, StreamTable::BytesPerStream()};
    if (cost != nullptr)
    {
      report.pluginCost = cost->Snapshot();
    }
    report.pluginCost.watcher = watcher;
    return StatsDocument(report, filter);
  }
}


TEST(JsonExporter, PhasesInMillisecondsAndUnobservablePhasesWithTheirReason)
{
  LabelledStats stats;
  stats.Stored(Instance(Transport::Rest, 1000 * kMs, 1002 * kMs, 1003 * kMs, 1010 * kMs), -1);
  stats.Stored(Instance(Transport::Dicom, 2000 * kMs, 2000 * kMs, 2001 * kMs, 2005 * kMs), 45 * kMs);
  stats.Outcome(Transport::Rest, Outcome::NotDicom);
  const Json::Value json = Export(stats, MakeStatus(true));

  const Json::Value& rest = json["transports"]["rest"];
  EXPECT_EQ(1u, rest["instances"]["stored"].asUInt());
  EXPECT_EQ(1u, rest["instances"]["notDicom"].asUInt());
  EXPECT_DOUBLE_EQ(2.0, rest["phases"]["receive"]["mean"].asDouble());
  EXPECT_DOUBLE_EQ(1.0, rest["phases"]["preStore"]["p50"].asDouble());
  EXPECT_DOUBLE_EQ(7.0, rest["phases"]["persist"]["max"].asDouble());
  EXPECT_DOUBLE_EQ(10.0, rest["phases"]["serverTotal"]["sum"].asDouble());
  EXPECT_FALSE(rest["phases"]["associationGap"]["observable"].asBool());

  const Json::Value& dicom = json["transports"]["dicom"];
  EXPECT_FALSE(dicom["phases"]["receive"]["observable"].asBool());
  EXPECT_NE(std::string::npos, dicom["phases"]["receive"]["reason"].asString().find("associationGap"));
  EXPECT_DOUBLE_EQ(45.0, dicom["phases"]["associationGap"]["p99"].asDouble());
  EXPECT_EQ(0u, dicom["phases"]["changeDispatch"]["count"].asUInt());
  EXPECT_TRUE(dicom["phases"]["changeDispatch"]["mean"].isNull());

  const Json::Value& all = json["transports"]["all"];
  EXPECT_EQ(2u, all["instances"]["stored"].asUInt());
  EXPECT_EQ(2u, all["phases"]["serverTotal"]["count"].asUInt());
  EXPECT_EQ(1u, all["phases"]["associationGap"]["count"].asUInt());

  EXPECT_EQ(1u, json["openRecords"]["count"].asUInt());
  EXPECT_DOUBLE_EQ(1000.0, json["openRecords"]["oldestAgeMs"].asDouble());
  EXPECT_TRUE(json["hooks"]["receivedInstance"]["registered"].asBool());
  EXPECT_FALSE(json["hooks"]["transcoder"]["registered"].asBool());
  EXPECT_EQ("IngestTranscoding is not configured", json["hooks"]["transcoder"]["reason"].asString());
  EXPECT_TRUE(json["definitions"]["phases"]["persist"]["partOfServerTotal"].asBool());
  EXPECT_GE(json["unobservable"].size(), 3u);
}


TEST(JsonExporter, MissingReceivedInstanceHookMakesItsPhasesUnobservable)
{
  LabelledStats stats;
  const Json::Value json = Export(stats, MakeStatus(false));
  for (const char* transport : {"rest", "dicom", "plugin", "job", "all"})
  {
    for (const char* phase : {"receive", "preStore", "associationGap"})
    {
      EXPECT_FALSE(json["transports"][transport]["phases"][phase]["observable"].asBool()) << transport << phase;
    }
    EXPECT_TRUE(json["transports"][transport]["phases"]["persist"].isMember("count"));
  }
}


TEST(JsonExporter, DicomTcpNoDelayIsTheEnvironmentsAndItsFormerOptionIsNotInEffect)
{
  LabelledStats stats;
  PluginStatus status = MakeStatus(true);
  const Json::Value off = Export(stats, status);
  EXPECT_FALSE(off["dicomTcpNoDelay"].isMember("configured"));  // no option decides it any more
  EXPECT_FALSE(off["dicomTcpNoDelay"]["inEffect"].asBool());
  EXPECT_EQ("", off["dicomTcpNoDelay"]["source"].asString());
  EXPECT_TRUE(off["dicomTcpNoDelay"]["detail"].isString());
  EXPECT_FALSE(off["configuration"].isMember("DicomTcpNoDelay"));
  EXPECT_EQ(0u, off["notInEffect"].size());

  status.dicomTcpNoDelay = DicomTcpNoDelayStatus{true, "environment", "TCP_NODELAY=\"1\" is in Orthanc's environment"};
  const Json::Value on = Export(stats, status);
  EXPECT_TRUE(on["dicomTcpNoDelay"]["inEffect"].asBool());
  EXPECT_EQ("environment", on["dicomTcpNoDelay"]["source"].asString());
  EXPECT_EQ(status.dicomTcpNoDelay.detail, on["dicomTcpNoDelay"]["detail"].asString());
  EXPECT_EQ(0u, on["notInEffect"].size());

  // The former option, given: ignored and said so, whatever the environment holds.
  status.configuration.removedOptions.push_back(RemovedOption{"DicomTcpNoDelay", "start Orthanc with TCP_NODELAY=1"});
  const Json::Value removed = Export(stats, status);
  ASSERT_EQ(1u, removed["notInEffect"].size());
  EXPECT_EQ("IngestPerf.DicomTcpNoDelay", removed["notInEffect"][0]["option"].asString());
  EXPECT_EQ("option DicomTcpNoDelay was removed (start Orthanc with TCP_NODELAY=1): ignored",
            removed["notInEffect"][0]["reason"].asString());
  EXPECT_FALSE(removed["configuration"].isMember("DicomTcpNoDelay"));
}


TEST(JsonExporter, PluginCostPerStoredInstanceAndShareOfServerTotal)
{
  LabelledStats stats;
  stats.Stored(Instance(Transport::Rest, 1000 * kMs, 1002 * kMs, 1003 * kMs, 1010 * kMs), -1);   // 10 ms
  stats.Stored(Instance(Transport::Dicom, 2000 * kMs, 2000 * kMs, 2001 * kMs, 2010 * kMs), -1);  // 10 ms
  PluginCost cost;
  cost.Record(Callback::StoredInstance, 3000);
  cost.Record(Callback::StoredInstance, 1000);
  cost.Record(Callback::HttpRequestFilter, 500);
  cost.Record(Callback::Change, 1500);

  const Json::Value json = Export(stats, MakeStatus(true), StatsQuery(), &cost);
  const Json::Value& result = json["pluginCost"];
  EXPECT_EQ(2u, result["callbacks"]["storedInstance"]["count"].asUInt());
  EXPECT_DOUBLE_EQ(0.002, result["callbacks"]["storedInstance"]["mean"].asDouble());
  EXPECT_EQ(0u, result["callbacks"]["transcoder"]["count"].asUInt());
  // The timed calls stand for kSamplingPeriod calls each: 6 us timed, 102 us in all.
  ASSERT_EQ(17u, PluginCost::kSamplingPeriod);
  EXPECT_EQ(17u, result["samplingPeriod"].asUInt());
  EXPECT_DOUBLE_EQ(0.102, result["totalMs"].asDouble());
  EXPECT_DOUBLE_EQ(0.102, result["callbacksMs"].asDouble());
  EXPECT_EQ(2u, result["storedInstances"].asUInt());
  EXPECT_DOUBLE_EQ(51.0, result["microsecondsPerStoredInstance"].asDouble());  // 102 us over 2 instances
  EXPECT_DOUBLE_EQ(0.51, result["percentOfServerTotal"].asDouble());           // 102 us of 20 ms
  EXPECT_NE(std::string::npos, result["clock"].asString().find("CLOCK_THREAD_CPUTIME_ID"));
  EXPECT_FALSE(result["threads"]["ingestWatcher"]["running"].asBool());

  cost.Reset();
  const Json::Value empty = Export(LabelledStats(), MakeStatus(true), StatsQuery(), &cost)["pluginCost"];
  EXPECT_TRUE(empty["microsecondsPerStoredInstance"].isNull());
  EXPECT_TRUE(empty["percentOfServerTotal"].isNull());
  EXPECT_EQ(0u, empty["callbacks"]["storedInstance"]["count"].asUInt());
  EXPECT_FALSE(Export(stats, MakeStatus(true), StatsQuery(), nullptr, false).isMember("pluginCost"));
}


TEST(JsonExporter, PluginCostAddsThePluginsThreadWhileIngestingIdleApartAndTheTimeInsideItsHooks)
{
  LabelledStats stats;
  stats.Stored(Instance(Transport::Dicom, 2000 * kMs, 2000 * kMs, 2001 * kMs, 2010 * kMs), -1);
  stats.Stored(Instance(Transport::Dicom, 3000 * kMs, 3000 * kMs, 3001 * kMs, 3010 * kMs), -1);
  PluginCost cost;
  cost.Record(Callback::StoredInstance, 1000);  // 17 us
  cost.Record(Callback::InstanceFilter, 2000);  // 34 us
  cost.AddInside(4000, false);                  // an instance's filter: 4 us
  cost.AddInside(6000, true);                   // its OnStored: 6 us, the instance's 10 us recorded
  cost.AddInside(3000, true);                   // the next instance: 3 us

  PluginThreadCost watcher;
  watcher.running = true;
  watcher.activeCpuNs = 3 * kMs;
  watcher.ticks = 5;
  watcher.idleCpuNs = 20000;
  watcher.idleWakes = 2;
  const Json::Value result = Export(stats, MakeStatus(true), StatsQuery(), &cost, true, watcher)["pluginCost"];
  EXPECT_EQ(2u, result["insideHooksPerInstanceMs"]["count"].asUInt());
  EXPECT_NEAR(0.010, result["insideHooksPerInstanceMs"]["max"].asDouble(), 0.0002);
  EXPECT_NEAR(0.003, result["insideHooksPerInstanceMs"]["min"].asDouble(), 0.0001);
  EXPECT_DOUBLE_EQ(0.051, result["callbacksMs"].asDouble());  // 17 + 34 us
  EXPECT_DOUBLE_EQ(3.0, result["threadsMs"].asDouble());
  EXPECT_DOUBLE_EQ(3.051, result["totalMs"].asDouble());  // the idle wakes are not the cost of ingest
  EXPECT_DOUBLE_EQ(0.02, result["idleCpuMs"].asDouble());
  EXPECT_DOUBLE_EQ(1525.5, result["microsecondsPerStoredInstance"].asDouble());
  EXPECT_DOUBLE_EQ(25.5, result["callbacksMicrosecondsPerStoredInstance"].asDouble());
  EXPECT_DOUBLE_EQ(1500.0, result["threadsMicrosecondsPerStoredInstance"].asDouble());
  const Json::Value& thread = result["threads"]["ingestWatcher"];
  EXPECT_TRUE(thread["running"].asBool());
  EXPECT_EQ(5u, thread["ticks"].asUInt());
  EXPECT_EQ(2u, thread["idleWakes"].asUInt());

  PluginCostSnapshot snapshot = cost.Snapshot();
  snapshot.watcher = watcher;
  EXPECT_EQ(51000u, snapshot.CallbacksNs());
  EXPECT_EQ(3051000u, snapshot.IngestNs());
}


TEST(JsonExporter, ThroughputOverTheActiveSpan)
{
  LabelledStats stats;
  for (int i = 0; i < 11; i++)
  {
    const int64_t start = 5000 * kMs + i * 100 * kMs;
    CompletedInstance c = Instance(Transport::Rest, start, start + kMs, start + 2 * kMs, start + 10 * kMs);
    c.storedBytes = 2000000;
    stats.Stored(c, -1);
  }
  const Json::Value json = Export(stats, MakeStatus(true));
  const Json::Value& throughput = json["transports"]["rest"]["throughput"];
  EXPECT_DOUBLE_EQ(1.01, throughput["activeSeconds"].asDouble());  // first start .. last OnStored
  EXPECT_NEAR(11 / 1.01, throughput["instancesPerSecond"].asDouble(), 0.001);
  EXPECT_NEAR(22 / 1.01, throughput["megabytesPerSecond"].asDouble(), 0.001);
}


TEST(JsonExporter, TransportFilter)
{
  LabelledStats stats;
  StatsQuery filter;
  filter.scope = StatsQuery::Scope::Single;
  filter.transport = Transport::Dicom;
  Json::Value json = Export(stats, MakeStatus(true), filter);
  EXPECT_EQ(1u, json["transports"].size());
  EXPECT_TRUE(json["transports"].isMember("dicom"));
  filter.scope = StatsQuery::Scope::MergedOnly;
  json = Export(stats, MakeStatus(true), filter);
  EXPECT_EQ(1u, json["transports"].size());
  EXPECT_TRUE(json["transports"].isMember("all"));
}


TEST(JsonExporter, MillisecondsKeepATenthOfAMicrosecond)
{
  EXPECT_DOUBLE_EQ(1.2346, NanosecondsToMilliseconds(1234560));
  EXPECT_DOUBLE_EQ(0.0001, NanosecondsToMilliseconds(100));
  EXPECT_DOUBLE_EQ(0.0, NanosecondsToMilliseconds(49));
}


TEST(JsonExporter, GroupByAndLabelFilters)
{
  LabelledStats stats;
  for (int i = 0; i < 6; i++)
  {
    stats.Stored(Instance(Transport::Dicom, (100 + i) * kMs, (100 + i) * kMs, (101 + i) * kMs, (105 + i) * kMs), -1,
                 i < 4 ? "CT01" : "MR02");
  }
  stats.Stored(Instance(Transport::Rest, 1000 * kMs, 1001 * kMs, 1002 * kMs, 1003 * kMs), -1, nullptr,
               "1.2.840.10008.1.2.4.70");

  StatsQuery byAet;
  byAet.hasGroupBy = true;
  byAet.groupBy = LabelDimension::RemoteAet;
  Json::Value json = Export(stats, MakeStatus(true), byAet);
  const Json::Value& groups = json["groups"];
  ASSERT_EQ(3u, groups.size());                                    // CT01, MR02, and (none) for the HTTP instance
  EXPECT_EQ("CT01", groups[0]["labels"]["remoteAet"].asString());  // sorted by stored count
  EXPECT_EQ(4u, groups[0]["instances"]["stored"].asUInt());
  EXPECT_EQ("MR02", groups[1]["labels"]["remoteAet"].asString());
  EXPECT_EQ("(none)", groups[2]["labels"]["remoteAet"].asString());
  EXPECT_EQ(7u, json["transports"]["all"]["instances"]["stored"].asUInt());
  EXPECT_EQ("remoteAet", json["query"]["groupBy"].asString());
  EXPECT_FALSE(json["transports"]["dicom"]["throughput"].isMember("last10s"));  // no rate window per series

  StatsQuery onlyMr;
  onlyMr.labels.emplace_back(LabelDimension::RemoteAet, "MR02");
  onlyMr.hasGroupBy = true;
  onlyMr.groupBy = LabelDimension::StoredSyntax;
  json = Export(stats, MakeStatus(true), onlyMr);
  ASSERT_EQ(1u, json["groups"].size());
  EXPECT_EQ("1.2.840.10008.1.2.1", json["groups"][0]["labels"]["storedSyntax"].asString());
  EXPECT_EQ(2u, json["groups"][0]["instances"]["stored"].asUInt());
  EXPECT_EQ(1u, json["query"]["streamsMatched"].asUInt());
  EXPECT_EQ("MR02", json["query"]["filters"]["remoteAet"].asString());

  StatsQuery unknown;
  unknown.labels.emplace_back(LabelDimension::RemoteAet, "NEVER_SEEN");
  json = Export(stats, MakeStatus(true), unknown);
  EXPECT_EQ(0u, json["query"]["streamsMatched"].asUInt());
  EXPECT_EQ(0u, json["transports"]["all"]["instances"]["stored"].asUInt());

  StatsQuery byTransport;
  byTransport.hasGroupBy = true;
  byTransport.groupBy = LabelDimension::Transport;
  json = Export(stats, MakeStatus(true), byTransport);
  ASSERT_EQ(2u, json["groups"].size());
  EXPECT_EQ("dicom", json["groups"][0]["labels"]["transport"].asString());
  EXPECT_FALSE(json["groups"][0]["phases"]["receive"]["observable"].asBool());

  // The label summary lists what the dictionaries hold.
  const Json::Value& labels = json["labels"];
  EXPECT_EQ(8u, labels["remoteAet"]["capacity"].asUInt());
  EXPECT_EQ(2u, labels["remoteAet"]["values"].size());
  EXPECT_EQ(3u, labels["streams"]["used"].asUInt());
  EXPECT_FALSE(labels.isMember("series"));  // the former name, gone since 0.2
}


TEST(JsonExporter, PeerPseudonymsAreStableShortHashes)
{
  // "aet-"/"ip-" and the first 8 hex digits of the 64-bit FNV-1a, as docs/configuration.md says.
  EXPECT_EQ("aet-28dbc166", PeerPseudonym("aet", "STORESCU"));
  EXPECT_EQ("ip-2f4209e7", PeerPseudonym("ip", "127.0.0.1"));
  EXPECT_EQ("aet-28dbc166", ExportedLabelValue(LabelDimension::RemoteAet, "STORESCU", true));
  EXPECT_EQ("aet-1541b7fa", ExportedLabelValue(LabelDimension::CalledAet, "ORTHANC", true));
  EXPECT_EQ("ip-2f4209e7", ExportedLabelValue(LabelDimension::RemoteIp, "127.0.0.1", true));
  EXPECT_EQ("STORESCU", ExportedLabelValue(LabelDimension::RemoteAet, "STORESCU", false));
  EXPECT_EQ("(none)", ExportedLabelValue(LabelDimension::RemoteAet, "(none)", true));
  EXPECT_EQ("(other)", ExportedLabelValue(LabelDimension::RemoteIp, "(other)", true));
  EXPECT_EQ("1.2.840.10008.1.2.1", ExportedLabelValue(LabelDimension::StoredSyntax, "1.2.840.10008.1.2.1", true));
  EXPECT_EQ("ip-04904621", ExportedAddress("10.0.0.7", true));
  EXPECT_TRUE(IsPseudonym(LabelDimension::RemoteAet, "aet-28dbc166"));
  EXPECT_TRUE(IsPseudonym(LabelDimension::RemoteIp, "ip-2f4209e7"));
  EXPECT_FALSE(IsPseudonym(LabelDimension::RemoteIp, "aet-28dbc166"));
  EXPECT_FALSE(IsPseudonym(LabelDimension::RemoteAet, "aet-28DBC166"));
  EXPECT_FALSE(IsPseudonym(LabelDimension::RemoteAet, "aet-28dbc16"));
  EXPECT_FALSE(IsPseudonym(LabelDimension::SopClass, "aet-28dbc166"));
  EXPECT_EQ("10.0.0.7", ExportedAddress("10.0.0.7", false));
}


TEST(JsonExporter, HashPeersReplacesAetsAndAddressesInEveryPartOfTheAnswer)
{
  LabelledStats stats;
  for (int i = 0; i < 3; i++)
  {
    stats.Stored(Instance(Transport::Dicom, (100 + i) * kMs, (100 + i) * kMs, (101 + i) * kMs, (105 + i) * kMs), -1,
                 "CT01", "1.2.840.10008.1.2.1", "10.0.0.7", "ORTHANC");
  }
  stats.Stored(Instance(Transport::Rest, 1000 * kMs, 1001 * kMs, 1002 * kMs, 1003 * kMs), -1, nullptr,
               "1.2.840.10008.1.2.1", "127.0.0.1");
  PluginStatus status = MakeStatus(true);
  status.configuration.hashPeers = true;

  auto exportJson = [&](const StatsQuery& filter) {
    IngestReport report;
    report.status = &status;
    report.collected = true;
    report.snapshot = stats.stats.Snapshot(10000 * kMs);
    report.catalog = &stats.catalog;
    if (filter.UsesStreams())
    {
      report.grouped = stats.stats.SnapshotGrouped(MakeStreamPredicate(filter, stats.catalog), filter.GroupBy());
    }
    LabelId ct01 = kOtherLabel;
    EXPECT_TRUE(stats.catalog.Find(LabelDimension::RemoteAet, "CT01", ct01));
    PeerAssociations peer;
    peer.remoteAet = ct01;
    peer.finished = 1;
    report.associations.peers.push_back(peer);
    report.associations.connections.push_back(
      DicomConnection{42, stats.catalog.InternValue(LabelDimension::RemoteIp, "10.0.0.7"), kUnidentified, kMs, 0});
    report.associations.connectionsReadNs = 2 * kMs;
    return StatsDocument(report, filter);
  };
  auto exportWith = [&](const StatsQuery& filter) {
    return Json::writeString(Json::StreamWriterBuilder(), exportJson(filter));
  };

  StatsQuery none;
  StatsQuery byAet;
  byAet.hasGroupBy = true;
  byAet.groupBy = LabelDimension::RemoteAet;
  StatsQuery byIp = byAet;
  byIp.groupBy = LabelDimension::RemoteIp;
  StatsQuery byCalled = byAet;
  byCalled.groupBy = LabelDimension::CalledAet;
  for (const StatsQuery& query : {none, byAet, byIp, byCalled})
  {
    const std::string text = exportWith(query);
    for (const char* raw : {"CT01", "ORTHANC", "10.0.0.7", "127.0.0.1"})
    {
      EXPECT_EQ(std::string::npos, text.find(raw)) << raw << " in " << text.substr(0, 200);
    }
    EXPECT_NE(std::string::npos, text.find("\"HashPeers\" : true"));
  }
  EXPECT_NE(std::string::npos, exportWith(none).find("\"aet-d24af19c\""));     // labels.remoteAet, associations
  EXPECT_NE(std::string::npos, exportWith(none).find("\"ip-04904621\" : 1"));  // openConnections.byRemoteIp
  EXPECT_NE(std::string::npos, exportWith(byIp).find("\"remoteIp\" : \"ip-2f4209e7\""));
  EXPECT_NE(std::string::npos, exportWith(byCalled).find("\"calledAet\" : \"aet-1541b7fa\""));

  // A filter may name a peer by its pseudonym (all a reader sees) or by its value; the query
  // echoes the pseudonym either way.
  for (const char* value : {"aet-d24af19c", "CT01"})
  {
    StatsQuery filter;
    filter.hashedPeers = true;
    filter.labels.emplace_back(LabelDimension::RemoteAet, value);
    const std::string text = exportWith(filter);
    EXPECT_NE(std::string::npos, text.find("\"streamsMatched\" : 1")) << value;
    EXPECT_EQ("aet-d24af19c", exportJson(filter)["query"]["filters"]["remoteAet"].asString()) << value;
    EXPECT_EQ(std::string::npos, text.find("CT01")) << value;
  }
  StatsQuery neverSeen;  // a value never seen is echoed hashed too: it may be a real AET
  neverSeen.hashedPeers = true;
  neverSeen.labels.emplace_back(LabelDimension::RemoteAet, "MR99");
  EXPECT_EQ(PeerPseudonym("aet", "MR99"), exportJson(neverSeen)["query"]["filters"]["remoteAet"].asString());

  StatsQuery notHashed;  // without HashPeers, a pseudonym is just a value never seen
  notHashed.labels.emplace_back(LabelDimension::RemoteAet, "aet-d24af19c");
  EXPECT_NE(std::string::npos, exportWith(notHashed).find("\"streamsMatched\" : 0"));
}


namespace
{
  int64_t fakeNowNs = 0;

  int64_t FakeClock()
  {
    return fakeNowNs;
  }
}


TEST(JsonExporter, WindowAndRecentBlockOnAnInjectedClock)
{
  const PluginStatus status = MakeStatus(true);
  LabelCatalog catalog{8};
  IngestStats stats{0, 0, 64, FakeClock};
  const int64_t start = 1000000 * kMs;  // 1000 s
  for (int i = 0; i < 4; i++)
  {
    const int64_t t = start + i * 1000 * kMs;
    stats.RecordStored(Measure(Instance(Transport::Rest, t, t + 1 * kMs, t + 2 * kMs, t + 6 * kMs), -1),
                       catalog.Intern(Transport::Rest, RawLabels(), 1000));
  }
  fakeNowNs = start + 5000 * kMs;
  stats.RecordOutcome(Outcome::NotDicom, catalog.InternEnded(Transport::Rest, IdentifiedLabels()));  // on the clock

  const auto exportAt = [&](int64_t now, const StatsQuery& filter) {
    IngestReport report;
    report.status = &status;
    report.collected = true;
    report.snapshot = stats.Snapshot(now);
    report.catalog = &catalog;
    report.windowsKept = true;
    if (filter.hasWindow)
    {
      report.window = stats.SnapshotWindow(filter.window, now);
    }
    report.recent = {stats.SnapshotWindow(Window::OneMinute, now), stats.SnapshotWindow(Window::FiveMinutes, now)};
    return StatsDocument(report, filter);
  };

  StatsQuery fiveMinutes;
  fiveMinutes.hasWindow = true;
  fiveMinutes.window = Window::FiveMinutes;
  const int64_t now = start + 8000 * kMs;  // 1008 s
  Json::Value answer = exportAt(now, fiveMinutes);
  EXPECT_EQ("5m", answer["window"]["name"].asString());
  EXPECT_DOUBLE_EQ(308.0, answer["window"]["seconds"].asDouble());  // 30 slots of 10 s and 8 s
  EXPECT_EQ(30, answer["window"]["fullSlots"].asInt());
  EXPECT_FALSE(answer.isMember("recent"));
  const Json::Value& rest = answer["transports"]["rest"];
  EXPECT_EQ(4u, rest["instances"]["stored"].asUInt64());
  EXPECT_EQ(1u, rest["instances"]["notDicom"].asUInt64());
  EXPECT_EQ(4u, rest["phases"]["serverTotal"]["count"].asUInt64());
  EXPECT_DOUBLE_EQ(24.0, rest["phases"]["serverTotal"]["sum"].asDouble());
  EXPECT_DOUBLE_EQ(308.0, rest["throughput"]["seconds"].asDouble());
  EXPECT_FALSE(rest["throughput"].isMember("last10s"));
  EXPECT_EQ(4u, answer["transports"]["all"]["instances"]["stored"].asUInt64());

  const Json::Value recent = exportAt(now, StatsQuery())["recent"];
  EXPECT_EQ(4u, recent["rest"]["1m"]["stored"].asUInt64());
  EXPECT_EQ(4u, recent["all"]["5m"]["stored"].asUInt64());
  EXPECT_DOUBLE_EQ(60.0 + 8.0, recent["rest"]["1m"]["seconds"].asDouble());
  EXPECT_NEAR(6.0, recent["rest"]["1m"]["serverTotalMs"]["p50"].asDouble(), 6.0 / 8);
  EXPECT_TRUE(recent["dicom"]["1m"]["serverTotalMs"]["p99"].isNull());

  // Ten minutes later the 1m and 5m windows are empty, the 1h one still holds the instances.
  const int64_t later = now + 600000 * kMs;
  EXPECT_EQ(0u, exportAt(later, StatsQuery())["recent"]["rest"]["5m"]["stored"].asUInt64());
  StatsQuery hour;
  hour.hasWindow = true;
  hour.window = Window::OneHour;
  EXPECT_EQ(4u, exportAt(later, hour)["transports"]["rest"]["instances"]["stored"].asUInt64());
}


// The calling AETs whose ids two ageings have left are named "(other)" now: one "(other)" row with
// those beyond MaxLabelValues, as labels.md says, not one row each (74 "(other)" rows in a 12-minute
// soak); and a row's gaps are never those of another value that took its id since.
TEST(JsonExporter, AetsAgedOutOfTheLabelsAreOneOtherRow)
{
  LabelCatalog catalog(8);
  const LabelId old1 = catalog.InternValue(LabelDimension::RemoteAet, "OLD1");
  const LabelId old2 = catalog.InternValue(LabelDimension::RemoteAet, "OLD2");
  const uint32_t before = catalog.Generation();
  catalog.Rotate();
  catalog.Rotate();  // two ageings: the ids of before name nothing any more
  const LabelId now = catalog.InternValue(LabelDimension::RemoteAet, "NOW1");
  PluginStatus status = MakeStatus(true);
  IngestReport report;
  report.status = &status;
  report.collected = true;
  report.catalog = &catalog;
  const auto row = [](LabelId id, uint32_t generation, uint64_t aets, uint64_t finished) {
    PeerAssociations peer;
    peer.remoteAet = id;
    peer.generation = generation;
    peer.aets = aets;
    peer.finished = finished;
    peer.byConnection = finished;
    return peer;
  };
  report.associations.peers = {row(old1, before, 1, 2), row(kOtherLabel, catalog.Generation(), 5, 7),
                               row(old2, before, 1, 3), row(now, catalog.Generation(), 1, 1)};
  const Json::Value rows = StatsDocument(report, StatsQuery())["associations"]["byRemoteAet"];
  ASSERT_EQ(2u, rows.size()) << rows.toStyledString();
  EXPECT_EQ("(other)", rows[0]["remoteAet"].asString());
  EXPECT_EQ(7u, rows[0]["distinctAets"].asUInt64());
  EXPECT_EQ(12u, rows[0]["finished"].asUInt64());
  EXPECT_EQ(12u, rows[0]["byConnection"].asUInt64());
  EXPECT_EQ("NOW1", rows[1]["remoteAet"].asString());
  EXPECT_EQ(1u, rows[1]["finished"].asUInt64());
}
