#include "Vocabulary/IngestVocabulary.h"
#include "Vocabulary/Routes.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

using namespace IngestPerf;

namespace
{
  Phase PhaseAt(size_t p)
  {
    return static_cast<Phase>(p);
  }
}


TEST(IngestVocabulary, EveryNameIsUniqueAndParsesBack)
{
  std::set<std::string> names;
  for (size_t p = 0; p < kPhaseCount; p++)
  {
    Phase parsed = Phase::Count;
    EXPECT_TRUE(names.insert(DefinitionOf(PhaseAt(p)).name).second);
    EXPECT_TRUE(ParsePhase(parsed, DefinitionOf(PhaseAt(p)).name));
    EXPECT_EQ(PhaseAt(p), parsed);
  }
  for (size_t t = 0; t < kTransportCount; t++)
  {
    Transport parsed = Transport::Count;
    EXPECT_TRUE(ParseTransport(parsed, TransportName(static_cast<Transport>(t))));
    EXPECT_EQ(static_cast<Transport>(t), parsed);
  }
  for (size_t d = 0; d < kLabelDimensions; d++)
  {
    LabelDimension parsed = LabelDimension::Count;
    EXPECT_TRUE(ParseLabelDimension(parsed, LabelDimensionName(static_cast<LabelDimension>(d))));
    EXPECT_EQ(static_cast<LabelDimension>(d), parsed);
    EXPECT_STRNE("", DefinitionOf(static_cast<LabelDimension>(d)).meaning);
  }
  Phase phase = Phase::Receive;
  Transport transport = Transport::Rest;
  LabelDimension dimension = LabelDimension::Transport;
  EXPECT_FALSE(ParsePhase(phase, "ServerTotal"));  // names are case-sensitive, as in every answer
  EXPECT_FALSE(ParsePhase(phase, nullptr));
  EXPECT_FALSE(ParseTransport(transport, "all"));  // "all" is a merge, not a transport
  EXPECT_FALSE(ParseLabelDimension(dimension, ""));
  EXPECT_EQ(Phase::Receive, phase);
}


TEST(IngestVocabulary, PhasesNestInsideTheInstanceAndServerTotalIsTheSumOfItsChildren)
{
  std::set<std::string> children;
  for (size_t p = 0; p < kPhaseCount; p++)
  {
    const PhaseDefinition& definition = DefinitionOf(PhaseAt(p));
    if (definition.place != PhasePlace::Inside)
    {
      EXPECT_EQ(Phase::Count, definition.parent) << definition.name;
      continue;
    }
    // A parent is the instance or a phase inside it, so every chain ends at serverTotal.
    ASSERT_NE(Phase::Count, definition.parent) << definition.name;
    const PhasePlace parentPlace = DefinitionOf(definition.parent).place;
    EXPECT_TRUE(parentPlace == PhasePlace::Instance || parentPlace == PhasePlace::Inside) << definition.name;
    if (PhasePartOfServerTotal(PhaseAt(p)))
    {
      children.insert(definition.name);
    }
  }
  EXPECT_EQ((std::set<std::string>{"receive", "preStore", "otherFilters", "persist", "otherOnStored"}), children);
  EXPECT_EQ(PhasePlace::Instance, DefinitionOf(Phase::ServerTotal).place);
  EXPECT_EQ(Phase::PreStore, DefinitionOf(Phase::Transcode).parent);
  EXPECT_EQ(Phase::Persist, DefinitionOf(Phase::IndexUpdate).parent);
}


TEST(IngestVocabulary, RecentInstancesKeepWhatIsKnownAtOnStored)
{
  EXPECT_TRUE(PhaseInRecentInstances(Phase::ServerTotal));
  EXPECT_TRUE(PhaseInRecentInstances(Phase::AssociationGap));
  EXPECT_TRUE(PhaseInRecentInstances(Phase::StorageWrite));
  EXPECT_FALSE(PhaseInRecentInstances(Phase::ChangeDispatch));  // later, on Orthanc's change thread
  EXPECT_FALSE(PhaseInRecentInstances(Phase::Count));
}


TEST(IngestVocabulary, PhasesAbsentFromATransportSayWhy)
{
  EXPECT_TRUE(PhaseExistsOn(Phase::Receive, Transport::Rest));
  EXPECT_TRUE(PhaseExistsOn(Phase::Receive, Transport::Plugin));
  EXPECT_FALSE(PhaseExistsOn(Phase::Receive, Transport::Dicom));
  EXPECT_NE(nullptr, strstr(PhaseAbsenceReason(Phase::Receive, Transport::Dicom), "DCMTK"));
  EXPECT_FALSE(PhaseExistsOn(Phase::Receive, Transport::Job));
  for (size_t t = 0; t < kTransportCount; t++)
  {
    const Transport transport = static_cast<Transport>(t);
    EXPECT_EQ(transport == Transport::Dicom, PhaseExistsOn(Phase::AssociationGap, transport));
    EXPECT_EQ(transport == Transport::Rest || transport == Transport::Plugin,
              PhaseExistsOn(Phase::RequestGap, transport));
    EXPECT_TRUE(PhaseExistsOn(Phase::ServerTotal, transport));
    EXPECT_TRUE(PhaseExistsOn(Phase::Persist, transport));
  }
}


TEST(IngestVocabulary, SizeClassesCutAtTheirNames)
{
  EXPECT_EQ(SizeClass::Under64KiB, SizeClassOf(65535));
  EXPECT_EQ(SizeClass::Under1MiB, SizeClassOf(65536));
  EXPECT_EQ(SizeClass::Under16MiB, SizeClassOf(1 << 20));
  EXPECT_EQ(SizeClass::Larger, SizeClassOf(uint64_t(256) << 20));
  EXPECT_STREQ(">=256MiB", SizeClassName(SizeClass::Larger));
}


TEST(Routes, OnePathOneMethodEach)
{
  std::set<std::string> paths;
  for (size_t r = 0; r < kRouteCount; r++)
  {
    const RouteDefinition& route = DefinitionOf(static_cast<Route>(r));
    EXPECT_TRUE(paths.insert(route.path).second) << route.path;
    EXPECT_EQ(0, std::string(route.path).rfind("/perf/", 0)) << route.path;
    EXPECT_STRNE("", route.answer);
    // The pattern is the path but for its "{file}" part.
    const std::string path = route.path;
    const size_t file = path.find("{file}");
    EXPECT_EQ(file == std::string::npos ? path : path.substr(0, file) + "(.*)", std::string(route.pattern));
  }
  EXPECT_EQ(RouteMethod::Post, DefinitionOf(Route::Reset).method);
  EXPECT_STREQ("GET", RouteMethodName(DefinitionOf(Route::Stats).method));
}
