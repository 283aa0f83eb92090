#include "Rest/RouteArguments.h"

#include "Export/PrometheusExporter.h"
#include "Platform/MonotonicClock.h"
#include "Recording/IngestState.h"
#include "Rest/RestRoutes.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

using namespace IngestPerf;


TEST(RouteArguments, StatsArguments)
{
  StatsQuery filter;
  Json::Value error;
  const char* keys[] = {"transport"};
  const char* dicom[] = {"dicom"};
  ASSERT_TRUE(ParseStatsArguments(filter, error, 1, keys, dicom));
  EXPECT_EQ(StatsQuery::Scope::Single, filter.scope);
  EXPECT_EQ(Transport::Dicom, filter.transport);

  const char* all[] = {"all"};
  ASSERT_TRUE(ParseStatsArguments(filter, error, 1, keys, all));
  EXPECT_EQ(StatsQuery::Scope::MergedOnly, filter.scope);

  ASSERT_TRUE(ParseStatsArguments(filter, error, 0, nullptr, nullptr));
  EXPECT_EQ(StatsQuery::Scope::Every, filter.scope);

  const char* bad[] = {"smtp"};
  EXPECT_FALSE(ParseStatsArguments(filter, error, 1, keys, bad));
  EXPECT_EQ("transport", error["parameter"].asString());
  EXPECT_EQ(5u, error["allowed"].size());

  Json::Value unknownError;
  const char* unknown[] = {"groupby"};
  EXPECT_FALSE(ParseStatsArguments(filter, unknownError, 1, unknown, dicom));
  EXPECT_EQ("unknown parameter 'groupby'", unknownError["error"].asString());

  // Label filters and groupBy
  const char* labelKeys[] = {"remoteAet", "groupBy", "transport"};
  const char* labelValues[] = {"CT01", "sopClass", "dicom"};
  ASSERT_TRUE(ParseStatsArguments(filter, error, 3, labelKeys, labelValues));
  EXPECT_TRUE(filter.UsesStreams());
  ASSERT_EQ(1u, filter.labels.size());
  EXPECT_EQ(LabelDimension::RemoteAet, filter.labels[0].first);
  EXPECT_EQ("CT01", filter.labels[0].second);
  EXPECT_TRUE(filter.hasGroupBy);
  EXPECT_EQ(LabelDimension::SopClass, filter.groupBy);

  Json::Value badGroup;
  const char* groupKey[] = {"groupBy"};
  const char* groupValue[] = {"color"};
  EXPECT_FALSE(ParseStatsArguments(filter, badGroup, 1, groupKey, groupValue));
  EXPECT_EQ("groupBy", badGroup["parameter"].asString());
  // What a refused groupBy lists is what groupBy takes: every label, and nothing it refuses (it
  // listed "window", which groupBy=window refuses).
  ASSERT_EQ(kLabelDimensions, badGroup["allowed"].size());
  for (const Json::Value& name : badGroup["allowed"])
  {
    StatsQuery grouped;
    Json::Value none;
    const std::string text = name.asString();
    const char* value[] = {text.c_str()};
    EXPECT_TRUE(ParseStatsArguments(grouped, none, 1, groupKey, value)) << text;
  }

  Json::Value twice;
  const char* twiceKeys[] = {"remoteAet", "remoteAet"};
  const char* twiceValues[] = {"A", "B"};
  EXPECT_FALSE(ParseStatsArguments(filter, twice, 2, twiceKeys, twiceValues));
  EXPECT_NE(std::string::npos, twice["error"].asString().find("twice"));

  Json::Value empty;
  const char* emptyValue[] = {""};
  EXPECT_FALSE(ParseStatsArguments(filter, empty, 1, labelKeys, emptyValue));
}


// Found by Fuzzing/StatsArgumentsFuzzer (minimized: groupBy=transport%00): "%00" decodes to a
// NUL, and the names were compared as C strings, so "transport%00anything" was taken for
// "transport", as a key and as a value. A decoded key or value holding a NUL names nothing.
TEST(RouteArguments, AnEncodedNulNamesNothing)
{
  StatsQuery filter;
  Json::Value error;
  const char* groupBy[] = {"groupBy"};
  const char* found[] = {"transport%00"};
  EXPECT_FALSE(ParseStatsArguments(filter, error, 1, groupBy, found));
  EXPECT_EQ("groupBy", error["parameter"].asString());

  const char* keys[] = {"transport%00x"};
  const char* dicom[] = {"dicom"};
  EXPECT_FALSE(ParseStatsArguments(filter, error, 1, keys, dicom));
  EXPECT_EQ(std::string("transport\0x", 11), error["parameter"].asString());

  const char* transport[] = {"transport"};
  const char* dicomNul[] = {"dicom%00"};
  EXPECT_FALSE(ParseStatsArguments(filter, error, 1, transport, dicomNul));
  EXPECT_EQ("transport", error["parameter"].asString());

  const char* remoteAet[] = {"remoteAet"};
  const char* aetNul[] = {"CT%0001"};
  EXPECT_FALSE(ParseStatsArguments(filter, error, 1, remoteAet, aetNul));
  EXPECT_EQ("remoteAet", error["parameter"].asString());

  const char* transportEncoded[] = {"%74ransport"};  // any other escape still decodes
  ASSERT_TRUE(ParseStatsArguments(filter, error, 1, groupBy, transportEncoded));
  EXPECT_EQ(LabelDimension::Transport, filter.groupBy);
}

TEST(RouteArguments, QueryComponentsArePercentDecoded)
{
  EXPECT_EQ("(none)", DecodeQueryComponent("%28none%29"));
  EXPECT_EQ("a b", DecodeQueryComponent("a+b"));
  EXPECT_EQ("100%", DecodeQueryComponent("100%"));
  EXPECT_EQ("%zz", DecodeQueryComponent("%zz"));
  EXPECT_EQ("", DecodeQueryComponent(nullptr));
  StatsQuery filter;
  Json::Value error;
  const char* keys[] = {"remoteAet"};
  const char* values[] = {"%28other%29"};
  ASSERT_TRUE(ParseStatsArguments(filter, error, 1, keys, values));
  EXPECT_EQ("(other)", filter.labels[0].second);
}


// Found by IntegrationTests/test_hostile_rest.py: the names and values were compared as C strings,
// so "transport=dicom%00junk" read as "dicom" and "remoteAet=%00" was a one-byte label filter.
TEST(RouteArguments, NulBytesAreRefused)
{
  StatsQuery filter;
  const char* transport[] = {"transport"};
  const char* dicomNul[] = {"dicom%00junk"};
  Json::Value error;
  EXPECT_FALSE(ParseStatsArguments(filter, error, 1, transport, dicomNul));
  EXPECT_EQ("transport", error["parameter"].asString());
  EXPECT_NE(std::string::npos, error["error"].asString().find("NUL"));

  const char* groupBy[] = {"groupBy"};
  const char* labelNul[] = {"remoteAet%00"};
  Json::Value groupError;
  EXPECT_FALSE(ParseStatsArguments(filter, groupError, 1, groupBy, labelNul));

  const char* remoteAet[] = {"remoteAet"};
  const char* nul[] = {"%00"};
  Json::Value labelError;
  EXPECT_FALSE(ParseStatsArguments(filter, labelError, 1, remoteAet, nul));

  const char* nulKey[] = {"transport%00"};
  const char* dicom[] = {"dicom"};
  Json::Value keyError;
  EXPECT_FALSE(ParseStatsArguments(filter, keyError, 1, nulKey, dicom));
  EXPECT_NE(std::string::npos, keyError["error"].asString().find("NUL"));
}


// Found by IntegrationTests/test_hostile_rest.py: "/perf/stats?" reached the plugin as one
// argument with an empty name, refused as an unknown parameter ''.
TEST(RouteArguments, EmptyFragmentsAreIgnored)
{
  StatsQuery filter;
  Json::Value error;
  const char* empty[] = {""};
  ASSERT_TRUE(ParseStatsArguments(filter, error, 1, empty, empty));
  EXPECT_EQ(StatsQuery::Scope::Every, filter.scope);

  const char* keys[] = {"transport", "", "groupBy"};
  const char* values[] = {"dicom", "", "remoteAet"};
  ASSERT_TRUE(ParseStatsArguments(filter, error, 3, keys, values));
  EXPECT_EQ(Transport::Dicom, filter.transport);
  EXPECT_TRUE(filter.hasGroupBy);

  const char* valueOnly[] = {"dicom"};  // "=dicom": a value without a name is still refused
  EXPECT_FALSE(ParseStatsArguments(filter, error, 1, empty, valueOnly));
}

TEST(RouteArguments, WindowParameter)
{
  StatsQuery filter;
  Json::Value error;
  const char* keys[] = {"window", "transport"};
  const char* values[] = {"5m", "dicom"};
  ASSERT_TRUE(ParseStatsArguments(filter, error, 2, keys, values));
  EXPECT_TRUE(filter.hasWindow);
  EXPECT_EQ(Window::FiveMinutes, filter.window);
  EXPECT_EQ(Transport::Dicom, filter.transport);

  const char* bad[] = {"2m"};
  EXPECT_FALSE(ParseStatsArguments(filter, error, 1, keys, bad));
  EXPECT_EQ("invalid value '2m' for parameter 'window'", error["error"].asString());
  EXPECT_EQ("window", error["parameter"].asString());
  EXPECT_EQ(4u, error["allowed"].size());

  // A label filter or groupBy with a window is answered from the ring of recent instances; the
  // diagnosis, which reads the window per transport, refuses a label filter with a window.
  for (const char* labelKey : {"remoteAet", "groupBy"})
  {
    Json::Value refused;
    const char* labelKeys[] = {"window", labelKey};
    const char* labelValues[] = {"1h", "sopClass"};
    EXPECT_TRUE(ParseStatsArguments(filter, refused, 2, labelKeys, labelValues)) << labelKey;
    EXPECT_TRUE(filter.hasWindow && filter.UsesStreams());
  }
  {
    Json::Value refused;
    const char* labelKeys[] = {"window", "remoteAet"};
    const char* labelValues[] = {"1h", "STORESCU"};
    EXPECT_FALSE(ParseDiagnosisArguments(filter, refused, 2, labelKeys, labelValues));
    EXPECT_EQ("window", refused["parameter"].asString());
    EXPECT_EQ("window=1h is diagnosed per transport only: it cannot be combined with label filters",
              refused["error"].asString());
  }

  const char* twice[] = {"window", "window"};
  const char* twiceValues[] = {"1m", "1m"};
  EXPECT_FALSE(ParseStatsArguments(filter, error, 2, twice, twiceValues));
  EXPECT_EQ("parameter 'window' given twice", error["error"].asString());
}

TEST(RouteArguments, SlowestArguments)
{
  RecentQuery query;
  Json::Value error;
  ASSERT_TRUE(ParseSlowestArguments(query, error, 0, nullptr, nullptr));
  EXPECT_EQ(20u, query.count);
  EXPECT_EQ(300, query.windowSeconds);
  EXPECT_EQ(Phase::ServerTotal, query.phase);

  const char* keys[] = {"n", "window", "phase", "transport", "remoteAet"};
  const char* values[] = {"5", "15m", "persist", "dicom", "CT01"};
  ASSERT_TRUE(ParseSlowestArguments(query, error, 5, keys, values));
  EXPECT_EQ(5u, query.count);
  EXPECT_EQ(900, query.windowSeconds);
  EXPECT_EQ("15m", query.window);
  EXPECT_EQ(Phase::Persist, query.phase);
  EXPECT_EQ(StatsQuery::Scope::Single, query.filter.scope);
  ASSERT_EQ(1u, query.filter.labels.size());

  const char* windows[] = {"1h", "90s", "45"};
  const int64_t seconds[] = {3600, 90, 45};
  const char* windowKey[] = {"window"};
  for (size_t i = 0; i < 3; i++)
  {
    ASSERT_TRUE(ParseSlowestArguments(query, error, 1, windowKey, &windows[i])) << windows[i];
    EXPECT_EQ(seconds[i], query.windowSeconds);
  }

  const struct
  {
    const char* key;
    const char* value;
  } bad[] = {{"n", "0"},
             {"n", "1001"},
             {"n", "-1"},
             {"n", "x"},
             {"window", "0m"},
             {"window", "25h"},
             {"window", "5d"},
             {"window", ""},
             {"phase", "nope"},
             {"phase", "changeDispatch"},
             {"phase", "responseSend"},  // removed: no Orthanc could measure it
             {"groupBy", "remoteAet"},
             {"transport", "smtp"},
             {"seconds", "5"}};
  for (const auto& argument : bad)
  {
    Json::Value reason;
    EXPECT_FALSE(ParseSlowestArguments(query, reason, 1, &argument.key, &argument.value))
      << argument.key << "=" << argument.value;
    EXPECT_TRUE(reason["error"].isString());
    EXPECT_TRUE(reason["parameter"].isString());
  }
  Json::Value unknown;
  const char* unknownKey[] = {"seconds"};
  const char* unknownValue[] = {"5"};
  ASSERT_FALSE(ParseSlowestArguments(query, unknown, 1, unknownKey, unknownValue));
  EXPECT_EQ("n", unknown["allowed"][0].asString());

  const char* twice[] = {"n", "n"};
  const char* twiceValues[] = {"1", "2"};
  EXPECT_FALSE(ParseSlowestArguments(query, error, 2, twice, twiceValues));
}


TEST(RouteArguments, TraceArguments)
{
  int64_t seconds = 0;
  Json::Value error;
  ASSERT_TRUE(ParseTraceArguments(seconds, error, 0, nullptr, nullptr));
  EXPECT_EQ(60, seconds);
  const char* keys[] = {"seconds"};
  const char* good[] = {"3600"};
  ASSERT_TRUE(ParseTraceArguments(seconds, error, 1, keys, good));
  EXPECT_EQ(3600, seconds);
  for (const char* value : {"0", "3601", "-5", "1m", ""})
  {
    Json::Value reason;
    EXPECT_FALSE(ParseTraceArguments(seconds, reason, 1, keys, &value)) << value;
    EXPECT_EQ("seconds", reason["parameter"].asString());
  }
  const char* other[] = {"n"};
  EXPECT_FALSE(ParseTraceArguments(seconds, error, 1, other, good));
}


TEST(RouteArguments, DiagnosisArgumentsDefaultToTheLastFiveMinutes)
{
  StatsQuery query;
  Json::Value error;
  ASSERT_TRUE(ParseDiagnosisArguments(query, error, 0, nullptr, nullptr));
  EXPECT_TRUE(query.hasWindow);
  EXPECT_EQ(Window::FiveMinutes, query.window);

  const char* windowKey[] = {"window", "transport"};
  const char* hour[] = {"1h", "dicom"};
  ASSERT_TRUE(ParseDiagnosisArguments(query, error, 2, windowKey, hour));
  EXPECT_EQ(Window::OneHour, query.window);
  EXPECT_EQ(Transport::Dicom, query.transport);

  // Label filters are kept since the reset only: no window then.
  const char* labelKey[] = {"remoteAet"};
  const char* aet[] = {"CT01"};
  ASSERT_TRUE(ParseDiagnosisArguments(query, error, 1, labelKey, aet));
  EXPECT_FALSE(query.hasWindow);

  const char* groupKey[] = {"groupBy"};
  const char* label[] = {"remoteAet"};
  EXPECT_FALSE(ParseDiagnosisArguments(query, error, 1, groupKey, label));
  EXPECT_EQ("groupBy", error["parameter"].asString());

  const char* both[] = {"window", "remoteAet"};
  const char* bothValues[] = {"5m", "CT01"};
  Json::Value combined;
  EXPECT_FALSE(ParseDiagnosisArguments(query, combined, 2, both, bothValues));
  EXPECT_EQ("window", combined["parameter"].asString());
}


TEST(RouteArguments, SeriesArgumentsDefaultToTheLastHourOfEachTransport)
{
  StatsQuery query;
  Json::Value error;
  ASSERT_TRUE(ParseSlotsArguments(query, error, 0, nullptr, nullptr));
  EXPECT_TRUE(query.hasWindow);
  EXPECT_EQ(Window::OneHour, query.window);
  EXPECT_EQ(StatsQuery::Scope::Every, query.scope);

  const char* keys[] = {"window", "transport", ""};
  const char* values[] = {"5m", "dicom", ""};  // an empty fragment is ignored
  ASSERT_TRUE(ParseSlotsArguments(query, error, 3, keys, values));
  EXPECT_EQ(Window::FiveMinutes, query.window);
  EXPECT_EQ(StatsQuery::Scope::Single, query.scope);
  EXPECT_EQ(Transport::Dicom, query.transport);

  // Kept per transport only: a label or groupBy is an unknown parameter here, whose reason says so.
  for (const char* key : {"remoteAet", "groupBy", "n"})
  {
    const char* value[] = {"CT01"};
    Json::Value reason;
    EXPECT_FALSE(ParseSlotsArguments(query, reason, 1, &key, value)) << key;
    EXPECT_EQ(key, reason["parameter"].asString());
    EXPECT_NE(std::string::npos, reason["error"].asString().find("per transport only"));
    ASSERT_EQ(2u, reason["allowed"].size());
    EXPECT_EQ("transport", reason["allowed"][0].asString());
  }

  // Values, NUL bytes and repeats as /perf/stats checks them.
  const char* windowKey[] = {"window"};
  for (const char* bad : {"2h", "", "1h%00", "90s"})
  {
    Json::Value reason;
    EXPECT_FALSE(ParseSlotsArguments(query, reason, 1, windowKey, &bad)) << bad;
    EXPECT_EQ("window", reason["parameter"].asString());
  }
  const char* twice[] = {"window", "window"};
  const char* twiceValues[] = {"1m", "5m"};
  EXPECT_FALSE(ParseSlotsArguments(query, error, 2, twice, twiceValues));
  EXPECT_EQ("parameter 'window' given twice", error["error"].asString());
  const char* transportKey[] = {"transport"};
  const char* smtp[] = {"smtp"};
  EXPECT_FALSE(ParseSlotsArguments(query, error, 1, transportKey, smtp));
  EXPECT_EQ("transport", error["parameter"].asString());
}


// GET /perf/metrics collects less than the whole report (MetricsQuery): its text must be the same.
TEST(RestRoutes, MetricsQueryGivesTheWholeCollectionsText)
{
  Configuration configuration;
  configuration.dicomScpTimeoutSeconds = 60;
  IngestState pipeline(configuration);
  InstanceTimeline& timeline = pipeline.timelines.ForCurrentThread();
  uint64_t key = 1;
  for (int i = 0; i < 300; i++)
  {
    const Transport transport = i % 3 == 0 ? Transport::Rest : Transport::Dicom;
    const std::string aet = "AET" + std::to_string(i % 7);
    RawLabels labels;
    labels.remoteAet = transport == Transport::Dicom ? aet.c_str() : nullptr;
    labels.remoteIp = "10.0.0.9";
    labels.storedSyntax = "1.2.840.10008.1.2.1";
    labels.sopClass = "1.2.840.10008.5.1.4.1.1.2";
    const int64_t start = MonotonicNowNs();
    timeline.Received(start, transport, 1000 + i, true, "1.2.840.10008.1.2.1", pipeline.recorder);
    timeline.Filtered(start + 1000, transport, pipeline.recorder);
    StoredEvent event{};
    event.nowNs = start + 2000 + i * 1000;
    event.wallNowNs = WallNowNs();
    event.transport = transport;
    event.storedBytes = 5000;
    event.instanceKey = key++;
    event.receptionSecond = event.wallNowNs / 1000000000 + 2;
    event.peerKey = transport == Transport::Dicom ? 1 + i % 7 : 0;
    event.labels = labels;
    timeline.Stored(event, pipeline.recorder);
  }
  PluginStatus status;
  StatsQuery whole;
  whole.eachStream = true;
  const auto text = [&](const StatsQuery& query) {
    std::string exported = ExportPrometheus(pipeline.Collect(query, status));
    // The one figure that moves between two collections: the time since the reset.
    const size_t line = exported.find("\northanc_ingest_since_reset_seconds ");
    EXPECT_NE(std::string::npos, line);
    exported.erase(line, exported.find('\n', line + 1) - line);
    return exported;
  };
  const std::string expected = text(whole);
  // A labelled stream's histograms (serverTotal here; associationGap only once gaps were measured).
  EXPECT_NE(std::string::npos, expected.find("remote_aet=\"AET1\""));
  EXPECT_NE(std::string::npos, expected.find("phase=\"serverTotal\""));
  EXPECT_EQ(expected, text(MetricsQuery()));
}
