#include "Ui/UiFiles.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace IngestPerf;


TEST(UiFiles, EveryEmbeddedFileIsFoundWithAKnownContentType)
{
  ASSERT_GT(kEmbeddedUiFileCount, 3u);
  for (size_t i = 0; i < kEmbeddedUiFileCount; i++)
  {
    const UiFile& file = kEmbeddedUiFiles[i];
    EXPECT_EQ(&file, FindUiFile(file.path));
    EXPECT_GT(file.size, 0u) << file.path;
    EXPECT_STRNE("application/octet-stream", UiContentType(file.path)) << file.path;
    if (i > 0)
    {
      EXPECT_LT(strcmp(kEmbeddedUiFiles[i - 1].path, file.path), 0);  // sorted, each once
    }
  }
  const UiFile* page = FindUiFile("index.html");
  ASSERT_NE(nullptr, page);
  const std::string text(reinterpret_cast<const char*>(page->data), page->size);
  EXPECT_EQ(0u, text.find("<!doctype html>"));
}

TEST(UiFiles, OtherPathsAreNotFound)
{
  for (const char* path : {"", "/index.html", "index.htm", "../index.html", "vendor", "vendor/", "INDEX.HTML"})
  {
    EXPECT_EQ(nullptr, FindUiFile(path)) << path;
  }
}

TEST(UiFiles, ContentTypes)
{
  EXPECT_STREQ("text/html; charset=utf-8", UiContentType("index.html"));
  EXPECT_STREQ("text/javascript; charset=utf-8", UiContentType("vendor/uPlot.iife.min.js"));
  EXPECT_STREQ("text/css; charset=utf-8", UiContentType("a.min.css"));
  EXPECT_STREQ("text/plain; charset=utf-8", UiContentType("vendor/LICENSE.txt"));
  EXPECT_STREQ("image/svg+xml", UiContentType("icon.svg"));
  EXPECT_STREQ("application/octet-stream", UiContentType("LICENSE"));
  EXPECT_STREQ("application/octet-stream", UiContentType("a.js/x"));
  EXPECT_STREQ("application/octet-stream", UiContentType("page.jsx"));
}

TEST(UiFiles, TheExplorerLinkIsRelative)
{
  const std::string script = OrthancExplorerLinkScript();
  EXPECT_NE(std::string::npos, script.find("'../perf/ui/index.html'"));
  EXPECT_EQ(std::string::npos, script.find("http"));
}
