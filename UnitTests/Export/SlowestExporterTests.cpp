// /perf/slowest written straight into its text (WriteSlowest) against the tree it was built as
// before (TreeReference): the same document for random and edge-case rings, queries and labels.
#include "Export/SlowestExporter.h"

#include "RecentRings.h"
#include "StatsDocument.h"
#include "TreeReference.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

using namespace IngestPerf;

namespace
{
  std::string SlowestText(const RecentReport& report, const RecentQuery& query, bool hashPeers)
  {
    return WrittenText([&](JsonWriter& out) { WriteSlowest(out, report, query, hashPeers); });
  }

  // The text parses, strictly, to the document the tree-built answer was (WriteJsonText of the
  // tree, as the route sent it): member for member, value for value, and has its length.
  void ExpectTheTreeBuiltSlowest(const RecentReport& report, const RecentQuery& query,
                                 std::initializer_list<bool> hashPeersValues = {false, true})
  {
    for (const bool hashPeers : hashPeersValues)
    {
      SCOPED_TRACE("window " + query.window + ", hashPeers " + std::to_string(hashPeers));
      const std::string text = SlowestText(report, query, hashPeers);
      const std::string tree =
        WrittenText([&](JsonWriter& out) { out.Tree(TreeReference::ExportSlowest(report, query, hashPeers)); });
      EXPECT_EQ(tree.size(), text.size());
      EXPECT_EQ("", FirstDifference(StrictlyParsed(tree), StrictlyParsed(text)));
    }
  }

  RecentQuery RandomQuery(RecentRing& ring)
  {
    RecentQuery query;
    query.phase = static_cast<Phase>(ring.Below(kPhaseCount));
    query.count = 1 + ring.Below(RecentQuery::kMaxCount);
    query.windowSeconds = 1 + static_cast<int64_t>(ring.Below(RecentQuery::kMaxWindowSeconds));
    query.window = std::to_string(query.windowSeconds) + "s";
    return query;
  }
}


TEST(SlowestExporter, TheTreeBuiltAnswerForTheEdgeCases)
{
  RecentQuery query;
  {
    SCOPED_TRACE("no catalog, no instance (the plugin not running)");
    RecentReport empty;
    ExpectTheTreeBuiltSlowest(empty, query);
  }
  {
    SCOPED_TRACE("an empty ring");
    RecentRing ring(1);
    ExpectTheTreeBuiltSlowest(ring.report, query);
  }
  {
    SCOPED_TRACE("one instance");
    RecentRing ring(2);
    ring.AddRandom(1, 60, 1, false);
    ExpectTheTreeBuiltSlowest(ring.report, query);
  }
  {
    SCOPED_TRACE("instances but no catalog");
    RecentRing ring(3);
    ring.AddRandom(5, 60, 1, false);
    ring.report.catalog = nullptr;
    ExpectTheTreeBuiltSlowest(ring.report, query);
  }
  {
    SCOPED_TRACE("odd labels on every transport, dictionaries overflowing, an odd window echoed");
    RecentRing ring(4, 3);
    ring.AddRandom(200, 300, 4, true);
    RecentQuery odd = query;
    odd.window = "5m\"\\\x01\xff";
    ExpectTheTreeBuiltSlowest(ring.report, odd);
  }
  {
    SCOPED_TRACE("a ring that wrapped: the window covered, or not, or nothing held");
    RecentRing ring(5);
    ring.AddRandom(50, 600, 3, false);
    ring.report.ring.pushed = 100000;
    ring.report.ring.skipped = 3;
    ExpectTheTreeBuiltSlowest(ring.report, query);  // reaches back 600 s of 300
    RecentQuery longer = query;
    longer.windowSeconds = 86400;
    longer.window = "24h";
    ExpectTheTreeBuiltSlowest(ring.report, longer);
    ring.report.ring.oldestStoredNs = 0;
    ExpectTheTreeBuiltSlowest(ring.report, longer);
  }
}


// n=1000 of a full ring (the route keeps n; the test writes the 4,096 the report holds), peers
// hashed.
TEST(SlowestExporter, TheTreeBuiltAnswerForAFullRing)
{
  RecentRing ring(6);
  ring.AddRandom(4096, 3600, 16, true);
  RecentQuery query;
  query.count = 1000;
  query.window = "1h";
  query.windowSeconds = 3600;
  ExpectTheTreeBuiltSlowest(ring.report, query, {true});
}


TEST(SlowestExporter, TheTreeBuiltAnswerForRandomRingsAndQueries)
{
  for (uint32_t seed = 200; seed < 240; seed++)
  {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RecentRing ring(seed, seed % 3 == 0 ? 3 : 64);
    ring.AddRandom(ring.Below(100), 1 + static_cast<int64_t>(ring.Below(3600)),
                   1 + static_cast<uint32_t>(ring.Below(8)), seed % 2 == 0);
    ring.report.ring.pushed += ring.Below(2) * 10000;
    ring.report.ring.skipped = ring.Below(3);
    ring.report.matched += ring.Below(1000);
    if (ring.Chance(0.2))
    {
      ring.report.ring.oldestStoredNs = 0;
    }
    ExpectTheTreeBuiltSlowest(ring.report, RandomQuery(ring));
  }
}


// The order the members are written in (docs/rest-api.md).
TEST(SlowestExporter, MembersInTheWrittenOrder)
{
  RecentRing ring(7);
  ring.AddRandom(2, 60, 1, false);
  const std::string text = SlowestText(ring.report, RecentQuery(), false);
  size_t last = 0;
  for (const char* member : {"\"phase\"",
                             "\"n\"",
                             "\"window\"",
                             "\"windowSeconds\"",
                             "\"units\"",
                             "\"matched\"",
                             "\"ring\"",
                             "\"capacity\"",
                             "\"held\"",
                             "\"pushed\"",
                             "\"skipped\"",
                             "\"oldest\"",
                             "\"reachesBackSeconds\"",
                             "\"coversWindow\"",
                             "\"instances\"",
                             "\"instanceId\"",
                             "\"arrival\"",
                             "\"thread\"",
                             "\"transport\"",
                             "\"outcome\"",
                             "\"storedBytes\"",
                             "\"phases\"",
                             "\"parts\"",
                             "\"labels\"",
                             "\"remoteAet\"",
                             "\"remoteIp\"",
                             "\"calledAet\"",
                             "\"receivedSyntax\"",
                             "\"storedSyntax\"",
                             "\"sopClass\"",
                             "\"sizeClass\""})
  {
    const size_t next = text.find(member, last);
    ASSERT_NE(std::string::npos, next) << member;
    EXPECT_LE(last, next) << member;
    last = next;
  }
}
