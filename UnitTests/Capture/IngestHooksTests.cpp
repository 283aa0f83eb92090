#include "Capture/IngestHooks.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

using namespace IngestPerf;


TEST(IngestHooks, RouteAndHeaderClassification)
{
  bool dicomWeb = true;
  EXPECT_TRUE(IsIngestRoute("/instances", dicomWeb));
  EXPECT_FALSE(dicomWeb);
  EXPECT_TRUE(IsIngestRoute("/dicom-web/studies", dicomWeb));
  EXPECT_TRUE(dicomWeb);
  EXPECT_TRUE(IsIngestRoute("/dicom-web/studies/1.2.3", dicomWeb));
  EXPECT_FALSE(IsIngestRoute("/studies/abc/modify", dicomWeb));
  EXPECT_FALSE(IsIngestRoute("/tools/find", dicomWeb));
  EXPECT_FALSE(IsIngestRoute("/instances/abc/modify", dicomWeb));
  EXPECT_FALSE(IsIngestRoute(nullptr, dicomWeb));

  std::string part10(132, '\0');
  part10.replace(128, 4, "DICM");
  EXPECT_TRUE(HasPart10Header(part10.data(), part10.size()));
  EXPECT_FALSE(HasPart10Header(part10.data(), 131));
  EXPECT_FALSE(HasPart10Header("hello", 5));
  EXPECT_FALSE(HasPart10Header(nullptr, 1000));
}
