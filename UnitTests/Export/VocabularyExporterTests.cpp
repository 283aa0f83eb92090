#include "Export/VocabularyExporter.h"

#include "Vocabulary/IngestVocabulary.h"
#include "Vocabulary/Routes.h"

#include <gtest/gtest.h>

using namespace IngestPerf;


TEST(VocabularyExporter, ListsEveryNameInTheVocabularysOrder)
{
  const Json::Value vocabulary = ExportVocabulary();
  ASSERT_EQ(kPhaseCount, vocabulary["phases"].size());
  for (Json::ArrayIndex p = 0; p < vocabulary["phases"].size(); p++)
  {
    EXPECT_EQ(DefinitionOf(static_cast<Phase>(p)).name, vocabulary["phases"][p]["name"].asString());
  }
  ASSERT_EQ(kTransportCount, vocabulary["transports"].size());
  EXPECT_EQ("rest", vocabulary["transports"][0]["name"].asString());
  EXPECT_EQ(kOutcomeCount, vocabulary["outcomes"].size());
  EXPECT_EQ(kFailureReasonCount, vocabulary["failureReasons"].size());
  ASSERT_EQ(kLabelDimensions, vocabulary["labels"].size());
  EXPECT_EQ("sizeClass", vocabulary["labels"][7]["name"].asString());
  EXPECT_EQ(static_cast<Json::ArrayIndex>(kSizeClassCount), vocabulary["labels"][7]["values"].size());
  EXPECT_EQ(kTransportCount, vocabulary["labels"][0]["values"].size());
  EXPECT_FALSE(vocabulary["labels"][1].isMember("values"));  // remoteAet: open-ended
  EXPECT_EQ(4u, vocabulary["windows"].size());
  ASSERT_EQ(kRouteCount, vocabulary["routes"].size());
  EXPECT_EQ("/perf/reset", vocabulary["routes"][static_cast<Json::ArrayIndex>(Route::Reset)]["path"].asString());
  EXPECT_EQ("POST", vocabulary["routes"][static_cast<Json::ArrayIndex>(Route::Reset)]["method"].asString());
}


TEST(VocabularyExporter, PhasesSayWhereTheyLieAndOnWhichTransports)
{
  const Json::Value vocabulary = ExportVocabulary();
  const Json::Value& transcode = vocabulary["phases"][static_cast<Json::ArrayIndex>(Phase::Transcode)];
  EXPECT_EQ("inside", transcode["place"].asString());
  EXPECT_EQ("preStore", transcode["parent"].asString());
  EXPECT_FALSE(transcode["partOfServerTotal"].asBool());
  EXPECT_EQ(kTransportCount, transcode["transports"].size());
  const Json::Value& gap = vocabulary["phases"][static_cast<Json::ArrayIndex>(Phase::AssociationGap)];
  EXPECT_EQ("before", gap["place"].asString());
  EXPECT_TRUE(gap["parent"].isNull());
  ASSERT_EQ(1u, gap["transports"].size());
  EXPECT_EQ("dicom", gap["transports"][0].asString());
  EXPECT_TRUE(gap["inRecentInstances"].asBool());
  const Json::Value& dispatch = vocabulary["phases"][static_cast<Json::ArrayIndex>(Phase::ChangeDispatch)];
  EXPECT_EQ("after", dispatch["place"].asString());
  EXPECT_FALSE(dispatch["inRecentInstances"].asBool());
}


TEST(VocabularyExporter, TheDefinitionsOfStatsAreTheSamePhasesWithTheirOrder)
{
  const Json::Value definitions = ExportDefinitions();
  const Json::Value vocabulary = ExportVocabulary();
  for (const Json::Value& phase : vocabulary["phases"])
  {
    Json::Value named = definitions["phases"][phase["name"].asString()];
    named["name"] = phase["name"];
    EXPECT_EQ(phase, named);
  }
  ASSERT_EQ(kPhaseCount, definitions["order"]["phases"].size());
  EXPECT_EQ("requestGap", definitions["order"]["phases"][static_cast<Json::ArrayIndex>(kPhaseCount - 1)].asString());
  EXPECT_EQ("requestWithoutInstance",
            definitions["order"]["outcomes"][static_cast<Json::ArrayIndex>(kOutcomeCount - 1)].asString());
  EXPECT_EQ(kTransportCount, definitions["order"]["transports"].size());
  EXPECT_EQ(kFailureReasonCount, definitions["order"]["failureReasons"].size());
  EXPECT_EQ(kFailureReasonCount, definitions["failureReasons"].size());
}
