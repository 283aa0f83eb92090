#include "Labels/LabelCatalog.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

TEST(LabelCatalog, NamesAndFindsEveryDimension)
{
  LabelCatalog catalog(4);
  RawLabels raw;
  raw.remoteAet = "CT01";
  raw.sopClass = "1.2.840.10008.5.1.4.1.1.2";
  const InstanceLabels labels = catalog.Intern(Transport::Dicom, raw, 100);
  EXPECT_EQ("dicom", catalog.Name(LabelDimension::Transport, labels.Get(LabelDimension::Transport)));
  EXPECT_EQ("CT01", catalog.Name(LabelDimension::RemoteAet, labels.Get(LabelDimension::RemoteAet)));
  EXPECT_EQ("(none)", catalog.Name(LabelDimension::CalledAet, labels.Get(LabelDimension::CalledAet)));
  EXPECT_EQ("<64KiB", catalog.Name(LabelDimension::SizeClass, labels.Get(LabelDimension::SizeClass)));
  LabelId id;
  ASSERT_TRUE(catalog.Find(LabelDimension::Transport, "dicom", id));
  EXPECT_EQ(labels.Get(LabelDimension::Transport), id);
  ASSERT_TRUE(catalog.Find(LabelDimension::SizeClass, "<64KiB", id));
  EXPECT_EQ(labels.Get(LabelDimension::SizeClass), id);
  EXPECT_FALSE(catalog.Find(LabelDimension::Transport, "smtp", id));
  EXPECT_EQ(nullptr, catalog.DictionaryOf(LabelDimension::Transport));
  EXPECT_NE(nullptr, catalog.DictionaryOf(LabelDimension::RemoteIp));
}
