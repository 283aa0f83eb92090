#include "Labels/InstanceLabels.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

TEST(InstanceLabels, KeyRoundTripAndFixedDimensions)
{
  InstanceLabels labels;
  labels.SetTransport(Transport::Dicom);
  labels.SetSizeClass(SizeClassOf(600 * 1024));
  labels.Set(LabelDimension::RemoteAet, 7);
  const InstanceLabels back = InstanceLabels::FromKey(labels.Key());
  EXPECT_EQ(labels.ids, back.ids);
  EXPECT_EQ(Transport::Dicom, back.GetTransport());
  EXPECT_NE(0u, labels.Key());
  InstanceLabels other;
  other.ids.fill(kOtherLabel);
  EXPECT_NE(0u, other.Key());
  EXPECT_EQ(other.ids, InstanceLabels::FromKey(other.Key()).ids);
  EXPECT_STREQ("64KiB-1MiB", SizeClassName(SizeClassOf(600 * 1024)));
  EXPECT_STREQ("<64KiB", SizeClassName(SizeClassOf(0)));
  EXPECT_STREQ(">=256MiB", SizeClassName(SizeClassOf(uint64_t(1) << 40)));
  LabelDimension dimension;
  EXPECT_TRUE(ParseLabelDimension(dimension, "calledAet"));
  EXPECT_EQ(LabelDimension::CalledAet, dimension);
  EXPECT_FALSE(ParseLabelDimension(dimension, "calledaet"));
}
