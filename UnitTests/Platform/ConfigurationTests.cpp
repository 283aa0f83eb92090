#include "Platform/Configuration.h"

#include <gtest/gtest.h>

#include <json/reader.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace IngestPerf;

namespace
{
  Json::Value Parse(const std::string& text)
  {
    Json::Value value;
    Json::CharReaderBuilder builder;
    std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
    std::string errors;
    EXPECT_TRUE(reader->parse(text.data(), text.data() + text.size(), &value, &errors)) << errors;
    return value;
  }

  std::string ErrorOf(const std::string& text)
  {
    try
    {
      ParseConfiguration(Parse(text));
    }
    catch (const ConfigurationError& e)
    {
      return e.what();
    }
    return "";
  }
}


TEST(Configuration, DefaultsWithoutASection)
{
  const Configuration configuration = ParseConfiguration(Parse("{\"HttpPort\": 8042}"));
  EXPECT_TRUE(configuration.enable);
  EXPECT_EQ(ReceivedInstanceMode::Auto, configuration.receivedInstanceCallback);
  EXPECT_TRUE(configuration.httpConnectionIdentity);
  EXPECT_EQ(512u, configuration.maxThreads);
  EXPECT_EQ(16384u, configuration.changeTableSize);
  EXPECT_EQ(256u, configuration.maxPeers);
  EXPECT_EQ(4096u, configuration.recentInstances);
  EXPECT_FALSE(configuration.hashPeers);
  EXPECT_FALSE(configuration.overwriteInstances);
  EXPECT_FALSE(configuration.ingestTranscoding);
  EXPECT_EQ(30u, configuration.dicomScpTimeoutSeconds);
}


TEST(Configuration, OverwriteInstancesAsABooleanOrAsOneOfOrthanc113sModes)
{
  const OrthancVersion v1_12_7{1, 12, 7};
  const OrthancVersion v1_13_0{1, 13, 0};
  struct Case
  {
    const char* json;
    bool overwrite;
    const char* mode;
    bool duplicatesBeforeFiltersOn1_13;
  };
  for (const Case& c : {Case{"{}", false, "", true}, Case{R"({"OverwriteInstances": false})", false, "", true},
                        Case{R"({"OverwriteInstances": true})", true, "", false},
                        Case{R"({"OverwriteInstances": "Never"})", false, "Never", true},
                        Case{R"({"OverwriteInstances": "Always"})", true, "Always", false},
                        Case{R"({"OverwriteInstances": "IfChanged"})", true, "IfChanged", true}})
  {
    const Configuration on1_13 = ParseConfiguration(Parse(c.json), v1_13_0);
    EXPECT_EQ(c.overwrite, on1_13.overwriteInstances) << c.json;
    EXPECT_EQ(c.mode, on1_13.overwriteInstancesMode) << c.json;
    EXPECT_EQ(c.duplicatesBeforeFiltersOn1_13, on1_13.duplicatesBeforeFilters) << c.json;
    EXPECT_FALSE(ParseConfiguration(Parse(c.json), v1_12_7).duplicatesBeforeFilters) << c.json;
  }
}


TEST(Configuration, ReadsEveryKey)
{
  const Configuration configuration = ParseConfiguration(Parse(R"({
    "OverwriteInstances": true, "IngestTranscoding": "1.2.840.10008.1.2.4.70", "DicomScpTimeout": 0,
    "IngestPerf": {"Enable": false, "ReceivedInstanceCallback": false, "MaxThreads": 64,
                   "ChangeTableSize": 1024, "MaxPeers": 8, "HashPeers": true, "RecentInstances": 100}})"));
  EXPECT_EQ(100u, configuration.recentInstances);
  EXPECT_FALSE(configuration.enable);
  EXPECT_EQ(ReceivedInstanceMode::Leave, configuration.receivedInstanceCallback);
  EXPECT_EQ(64u, configuration.maxThreads);
  EXPECT_EQ(1024u, configuration.changeTableSize);
  EXPECT_EQ(8u, configuration.maxPeers);
  EXPECT_TRUE(configuration.hashPeers);
  EXPECT_TRUE(configuration.overwriteInstances);
  EXPECT_TRUE(configuration.ingestTranscoding);
  EXPECT_EQ("1.2.840.10008.1.2.4.70", configuration.ingestTranscodingSyntax);
  EXPECT_EQ(0u, configuration.dicomScpTimeoutSeconds);
  EXPECT_EQ((std::vector<std::string>{"remoteAet", "remoteIp"}), configuration.prometheusLabels);  // the default
  EXPECT_EQ((std::vector<std::string>{"sopClass"}),
            ParseConfiguration(Parse(R"({"IngestPerf": {"PrometheusLabels": ["sopClass"]}})")).prometheusLabels);
  EXPECT_TRUE(ParseConfiguration(Parse(R"({"IngestPerf": {"PrometheusLabels": []}})")).prometheusLabels.empty());
}


TEST(Configuration, EveryErrorNamesTheKey)
{
  EXPECT_NE(std::string::npos, ErrorOf(R"({"IngestPerf": []})").find("IngestPerf: expected a JSON object"));
  EXPECT_NE(
    std::string::npos,
    ErrorOf(R"({"IngestPerf": {"Enable": "yes"}})").find("IngestPerf.Enable: expected true or false, got \"yes\""));
  EXPECT_NE(std::string::npos,
            ErrorOf(R"({"IngestPerf": {"ReceivedInstanceCallback": 1}})").find("IngestPerf.ReceivedInstanceCallback"));
  EXPECT_NE(std::string::npos, ErrorOf(R"({"IngestPerf": {"MaxThreads": 0}})")
                                 .find("IngestPerf.MaxThreads: expected an integer from 1 to 65536, got 0"));
  EXPECT_NE(std::string::npos, ErrorOf(R"({"IngestPerf": {"MaxThreads": 1.5}})").find("IngestPerf.MaxThreads"));
  EXPECT_NE(std::string::npos, ErrorOf(R"({"IngestPerf": {"MaxThreads": true}})").find("IngestPerf.MaxThreads"));
  EXPECT_NE(std::string::npos,
            ErrorOf(R"({"IngestPerf": {"ChangeTableSize": -3}})").find("IngestPerf.ChangeTableSize"));
  EXPECT_NE(std::string::npos,
            ErrorOf(R"({"IngestPerf": {"ChangeTableSize": 99999999999}})").find("IngestPerf.ChangeTableSize"));
  EXPECT_NE(std::string::npos, ErrorOf(R"({"IngestPerf": {"MaxPeers": "8"}})").find("IngestPerf.MaxPeers"));
  EXPECT_NE(std::string::npos, ErrorOf(R"({"IngestPerf": {"HashPeers": "yes"}})")
                                 .find("IngestPerf.HashPeers: expected true or false, got \"yes\""));
  EXPECT_NE(std::string::npos, ErrorOf(R"({"IngestPerf": {"RecentInstances": 15}})")
                                 .find("IngestPerf.RecentInstances: expected an integer from 16 to 262144, got 15"));
  EXPECT_NE(std::string::npos,
            ErrorOf(R"({"IngestPerf": {"RecentInstances": 262145}})").find("IngestPerf.RecentInstances"));
  EXPECT_NE(std::string::npos,
            ErrorOf(R"({"IngestPerf": {"RecentInstances": "4k"}})").find("IngestPerf.RecentInstances"));
  EXPECT_NE(
    std::string::npos,
    ErrorOf(R"({"IngestPerf": {"TimedStorage": 1}})").find("IngestPerf.TimedStorage: expected true or false, got 1"));
  EXPECT_NE(std::string::npos, ErrorOf(R"({"IngestPerf": {"TimedStorage": "true"}})")
                                 .find("IngestPerf.TimedStorage: expected true or false, got \"true\""));
  for (const char* wrong : {R"("remoteAet")", R"([1])", R"({"remoteAet": true})"})
  {
    EXPECT_NE(std::string::npos, ErrorOf(std::string(R"({"IngestPerf": {"PrometheusLabels": )") + wrong + "}}")
                                   .find("IngestPerf.PrometheusLabels: expected a list of label names"))
      << wrong;
  }
}


TEST(Configuration, AnUnknownKeyIsListedWithTheClosestKnownOne)
{
  // Orthanc and its other plugins start with keys they do not know: so does this plugin.
  EXPECT_EQ("", ErrorOf(R"({"IngestPerf": {"Timedstorage": true, "Enabled": true, "Foo": 1}})"));
  const Configuration configuration =
    ParseConfiguration(Parse(R"({"IngestPerf": {"Timedstorage": true, "Enabled": false, "Foo": 1}})"));
  EXPECT_FALSE(configuration.timedStorage);  // ignored: not what was meant, but never guessed
  EXPECT_TRUE(configuration.enable);
  ASSERT_EQ(3u, configuration.unknownOptions.size());
  std::vector<std::string> messages;
  for (const UnknownOption& unknown : configuration.unknownOptions)
  {
    messages.push_back(unknown.Message());
  }
  std::sort(messages.begin(), messages.end());
  EXPECT_EQ("unknown option Enabled; did you mean Enable?", messages[0]);
  EXPECT_EQ("unknown option Foo", messages[1]);
  EXPECT_EQ("unknown option Timedstorage; did you mean TimedStorage?", messages[2]);
  EXPECT_EQ("ReceivedInstanceCallback", ClosestKnownOption("ReceivedInstanceCallbak"));
  EXPECT_EQ("MaxThreads", ClosestKnownOption("MaxTreads"));
  EXPECT_EQ("TimedStorage", ClosestKnownOption("timedstorage"));
  EXPECT_EQ("HashPeers", ClosestKnownOption("HasPeers"));
  EXPECT_EQ("", ClosestKnownOption("TcpNoDelay"));
  EXPECT_EQ("", ClosestKnownOption(""));
  EXPECT_EQ("", ClosestKnownOption(std::string(10000, 'x')));
}


TEST(Configuration, OptionsOfEarlierReleasesAreIgnoredAndSaidSoWithWhy)
{
  EXPECT_EQ(128u, ParseConfiguration(Parse("{}")).maxStreams);
  Configuration configuration = ParseConfiguration(Parse(R"({"IngestPerf": {"MaxStreams": 7}})"));
  EXPECT_EQ(7u, configuration.maxStreams);
  EXPECT_TRUE(configuration.removedOptions.empty());

  // Whatever their value: a wrong one keeps nothing from starting.
  configuration =
    ParseConfiguration(Parse(R"({"IngestPerf": {"MaxSeries": 0, "TimeRestAnswers": "yes", "DicomTcpNoDelay": null}})"));
  EXPECT_EQ(128u, configuration.maxStreams);
  EXPECT_TRUE(configuration.unknownOptions.empty());
  ASSERT_EQ(3u, configuration.removedOptions.size());
  // The former remedy for the C-STORE answer stall says what replaces it: the operator's variable.
  EXPECT_NE(std::string::npos, configuration.removedOptions[0].Message().find(
                                 "option DicomTcpNoDelay was removed (a plugin does not write Orthanc's environment: "
                                 "start Orthanc with TCP_NODELAY=1 in its environment instead"));
  EXPECT_EQ("option MaxSeries was removed (its name is MaxStreams): ignored",
            configuration.removedOptions[1].Message());
  EXPECT_NE(std::string::npos, configuration.removedOptions[2].Message().find(
                                 "option TimeRestAnswers was removed (no Orthanc has a hook"));
  EXPECT_NE(std::string::npos, ErrorOf(R"({"IngestPerf": {"MaxStreams": "128"}})").find("IngestPerf.MaxStreams"));
}


TEST(Configuration, BoundariesAreAccepted)
{
  EXPECT_EQ("", ErrorOf(R"({"IngestPerf": {"MaxThreads": 1, "ChangeTableSize": 16777216, "MaxPeers": 65536}})"));
  EXPECT_EQ("", ErrorOf(R"({"IngestPerf": {"RecentInstances": 16}})"));
  EXPECT_EQ("", ErrorOf(R"({"IngestPerf": {"RecentInstances": 262144}})"));
  EXPECT_EQ("", ErrorOf(R"({"IngestPerf": {}})"));
}


TEST(OrthancVersion, ParsesReleasesAndTreatsOtherBuildsAsNewest)
{
  const OrthancVersion debian12 = OrthancVersion::Parse("1.10.1");
  EXPECT_EQ("1.10.1", debian12.ToString());
  EXPECT_TRUE(debian12.AtLeast(1, 10, 1));
  EXPECT_FALSE(debian12.AtLeast(1, 10, 2));
  EXPECT_FALSE(debian12.AtLeast(1, 11, 0));
  EXPECT_TRUE(debian12.AtLeast(0, 9, 9));
  const OrthancVersion debian13 = OrthancVersion::Parse("1.12.7");
  EXPECT_TRUE(debian13.AtLeast(1, 12, 2));
  EXPECT_FALSE(debian13.AtLeast(1, 13, 0));
  EXPECT_TRUE(OrthancVersion::Parse("mainline").AtLeast(1, 13, 0));
  EXPECT_TRUE(OrthancVersion::Parse("1.12").AtLeast(1, 99, 0));  // not a release number
  EXPECT_TRUE(OrthancVersion::Parse("1.12.7-rc1").AtLeast(1, 99, 0));
}


TEST(Configuration, HttpCompressionDefaultFollowsTheRunningOrthanc)
{
  // Orthanc changed the default in 1.12.2, and stopped compressing answers under 2048 bytes.
  EXPECT_TRUE(ParseConfiguration(Parse("{}"), OrthancVersion::Parse("1.10.1")).httpCompressionEnabled);
  EXPECT_TRUE(ParseConfiguration(Parse("{}"), OrthancVersion::Parse("1.12.1")).httpCompressionEnabled);
  const Configuration current = ParseConfiguration(Parse("{}"), OrthancVersion::Parse("1.12.7"));
  EXPECT_FALSE(current.httpCompressionEnabled);
  EXPECT_FALSE(current.orthanc.CompressesSmallAnswers());
  const Configuration enabled =
    ParseConfiguration(Parse("{\"HttpCompressionEnabled\": true}"), OrthancVersion::Parse("1.12.7"));
  EXPECT_TRUE(enabled.httpCompressionEnabled);
  EXPECT_FALSE(ParseConfiguration(Parse("{\"HttpCompressionEnabled\": false}"), OrthancVersion::Parse("1.10.1"))
                 .httpCompressionEnabled);
}


TEST(Configuration, ReceivedInstanceCallbackIsAutoTrueOrFalse)
{
  const auto mode = [](const char* value) {
    return ParseConfiguration(Parse(std::string(R"({"IngestPerf": {"ReceivedInstanceCallback": )") + value + "}}"))
      .receivedInstanceCallback;
  };
  EXPECT_EQ(ReceivedInstanceMode::Auto, mode("\"Auto\""));
  EXPECT_EQ(ReceivedInstanceMode::Take, mode("true"));
  EXPECT_EQ(ReceivedInstanceMode::Leave, mode("false"));
  for (const char* wrong : {"\"auto\"", "1", "null", "\"true\""})
  {
    EXPECT_THROW(mode(wrong), ConfigurationError) << wrong;
  }
  EXPECT_EQ(Json::Value("Auto"), ReceivedInstanceModeValue(ReceivedInstanceMode::Auto));
  EXPECT_EQ(Json::Value(true), ReceivedInstanceModeValue(ReceivedInstanceMode::Take));
  EXPECT_EQ(Json::Value(false), ReceivedInstanceModeValue(ReceivedInstanceMode::Leave));
}


TEST(Configuration, ThePluginsOrthancLoadsAreKeptAsWritten)
{
  const Configuration configuration =
    ParseConfiguration(Parse(R"({"Plugins": ["/usr/share/orthanc/plugins/", "plugins/libSite.so", 7]})"));
  EXPECT_EQ((std::vector<std::string>{"/usr/share/orthanc/plugins/", "plugins/libSite.so"}), configuration.plugins);
  EXPECT_TRUE(ParseConfiguration(Parse("{}")).plugins.empty());
}
