#include "Diagnosis/Evidence.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace IngestPerf;


TEST(Evidence, EachValueKeepsItsKind)
{
  EXPECT_EQ(Evidence::Kind::Null, Evidence().GetKind());
  EXPECT_EQ(Evidence::Kind::Bool, Evidence(false).GetKind());
  EXPECT_EQ(Evidence::Kind::Signed, Evidence(int64_t(-2)).GetKind());
  EXPECT_EQ(Evidence::Kind::Signed, Evidence(3).GetKind());
  EXPECT_EQ(Evidence::Kind::Unsigned, Evidence(uint64_t(7)).GetKind());
  EXPECT_EQ(Evidence::Kind::Unsigned, Evidence(8u).GetKind());
  EXPECT_EQ(Evidence::Kind::Unsigned, Evidence(size_t(9)).GetKind());
  EXPECT_EQ(Evidence::Kind::Real, Evidence(3.0).GetKind());
  EXPECT_EQ(Evidence::Kind::Text, Evidence("SQLite").GetKind());  // not a bool
  EXPECT_EQ(Evidence::Kind::Text, Evidence(std::string("SQLite")).GetKind());
  EXPECT_EQ(Evidence::Kind::List, Evidence::List().GetKind());
  EXPECT_EQ(Evidence::Kind::Object, Evidence::Object().GetKind());

  EXPECT_TRUE(Evidence(true).AsBool());
  EXPECT_EQ(-2, Evidence(int64_t(-2)).AsSigned());
  EXPECT_EQ(UINT64_MAX, Evidence(UINT64_MAX).AsUnsigned());
  EXPECT_EQ(2.5, Evidence(2.5).AsReal());
  EXPECT_EQ("SQLite", Evidence("SQLite").AsText());
  // Another kind reads as false, 0 or "".
  EXPECT_EQ(0u, Evidence(int64_t(5)).AsUnsigned());
  EXPECT_EQ(0.0, Evidence(uint64_t(5)).AsReal());
  EXPECT_EQ("", Evidence().AsText());
  EXPECT_FALSE(Evidence("true").AsBool());
}


TEST(Evidence, NamedValuesStayInTheOrderWritten)
{
  Evidence evidence;
  evidence["zeta"] = uint64_t(1);
  evidence["Alpha"] = "first written second";
  evidence["serverTotal"]["count"] = uint64_t(40);
  evidence["zeta"] = 2.5;  // written again: replaced in its place
  EXPECT_EQ(Evidence::Kind::Object, evidence.GetKind());
  ASSERT_EQ(3u, evidence.Size());
  EXPECT_EQ((std::vector<std::string>{"zeta", "Alpha", "serverTotal"}), evidence.Names());
  EXPECT_EQ(2.5, evidence.Values()[0].AsReal());
  EXPECT_EQ(40u, evidence["serverTotal"]["count"].AsUnsigned());

  const Evidence& read = evidence;
  EXPECT_TRUE(read.Has("Alpha"));
  EXPECT_FALSE(read.Has("beta"));
  EXPECT_TRUE(read["beta"].IsNull());  // reading adds nothing
  EXPECT_TRUE(read["serverTotal"]["count"]["deeper"].IsNull());
  EXPECT_EQ(3u, read.Size());
}


TEST(Evidence, ListsHoldAnyValue)
{
  Evidence evidence = Evidence::Object();
  Evidence& senders = evidence["senders"];
  senders = Evidence::List();
  Evidence row;
  row["remoteAet"] = "CT";
  senders.Append(std::move(row));
  senders.Append(Evidence());
  ASSERT_EQ(2u, senders.Size());
  EXPECT_EQ("CT", senders[0]["remoteAet"].AsText());
  EXPECT_TRUE(senders[1].IsNull());

  const Evidence& read = evidence;
  EXPECT_EQ("CT", read["senders"][0]["remoteAet"].AsText());
  EXPECT_TRUE(read["senders"][2].IsNull());
  EXPECT_THROW(senders[2], std::out_of_range);

  Evidence appended;
  appended.Append(uint64_t(1));
  EXPECT_EQ(Evidence::Kind::List, appended.GetKind());
  EXPECT_EQ(0u, Evidence::List().Size());
}


TEST(Evidence, AValueIsNotBothAListAndNamedValues)
{
  Evidence list = Evidence::List();
  EXPECT_THROW(list["name"], std::logic_error);
  Evidence object = Evidence::Object();
  EXPECT_THROW(object.Append(Evidence()), std::logic_error);
  Evidence figure = 2.5;
  EXPECT_THROW(figure["name"], std::logic_error);
  EXPECT_THROW(figure.Append(Evidence()), std::logic_error);
}
