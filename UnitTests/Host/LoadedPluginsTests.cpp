#include "Host/LoadedPlugins.h"

#include <gtest/gtest.h>

#include <cstdio>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace IngestPerf;

namespace
{
  class TemporaryFolder
  {
  public:
    TemporaryFolder() :
      path_(std::filesystem::temp_directory_path() /
            ("loaded-plugins-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
    {
      std::filesystem::remove_all(path_);
      std::filesystem::create_directories(path_);
    }
    ~TemporaryFolder() { std::filesystem::remove_all(path_); }

    std::string Touch(const std::string& relative) const
    {
      const std::filesystem::path file = path_ / relative;
      std::filesystem::create_directories(file.parent_path());
      std::ofstream(file.string()) << "x";
      return file.string();
    }
    std::string Path() const { return path_.string(); }

  private:
    std::filesystem::path path_;
  };

  std::vector<std::string> Names(std::vector<std::string> files)
  {
    for (std::string& file : files)
    {
      file = std::filesystem::path(file).filename().string();
    }
    std::sort(files.begin(), files.end());
    return files;
  }
}


TEST(LoadedPlugins, AFolderGivesItsFilesEndingInSoAFileItselfRelativeToTheConfiguration)
{
  TemporaryFolder folder;
  folder.Touch("plugins/libOrthancDicomWeb.so");
  folder.Touch("plugins/libOrthancPython.so");
  folder.Touch("plugins/libOrthancPostgreSQLIndex.so.4.0");  // not loaded from a folder: its extension is .0
  folder.Touch("plugins/README.txt");
  folder.Touch("plugins/nested/libOrthancGdcm.so");  // folders are not scanned recursively
  folder.Touch("site/libSiteFilters.so.1");          // an explicit file is loaded whatever its name
  const std::vector<std::string> files =
    LoadedPluginFiles({folder.Path() + "/plugins", "site/libSiteFilters.so.1", "missing.so"}, folder.Path());
  EXPECT_EQ(
    (std::vector<std::string>{"libOrthancDicomWeb.so", "libOrthancPython.so", "libSiteFilters.so.1", "missing.so"}),
    Names(files));
  EXPECT_TRUE(LoadedPluginFiles({}, folder.Path()).empty());
}


TEST(LoadedPlugins, OnlyPluginsKnownToLeaveTheReceivedInstanceCallbackLetThePluginTakeIt)
{
  EXPECT_TRUE(
    PluginsThatMayTakeTheReceivedInstanceCallback(
      {"/usr/share/orthanc/plugins/libOrthancDicomWeb.so", "/usr/share/orthanc/plugins/libOrthancGdcm.so",
       "/usr/lib/orthanc/libOrthancPostgreSQLIndex.so.4.0", "/opt/libOrthancIngestPerf.so",
       "/tmp/copy/libOrthancIngestPerf.so.0.1.0", "build/libOrthancIngestPerfFaults.so", "libModalityWorklists.so"})
      .empty());
  EXPECT_EQ((std::vector<std::string>{"libOrthancPython.so", "libSiteFilters.so", "OrthancDicomWeb.so"}),
            PluginsThatMayTakeTheReceivedInstanceCallback({"/usr/share/orthanc/plugins/libOrthancPython.so",
                                                           "/usr/share/orthanc/plugins/libOrthancDicomWeb.so",
                                                           "/site/libSiteFilters.so", "/renamed/OrthancDicomWeb.so"}));
}


TEST(LoadedPlugins, ThisPluginRenamedIsStillThisPlugin)
{
  // The file this copy was loaded from, whatever its name (a packager's, an administrator's).
  const std::string own = ::testing::TempDir() + "/ingest-perf-renamed.so";
  const std::string other = ::testing::TempDir() + "/libSiteFilters.so";
  for (const std::string& path : {own, other})
  {
    FILE* file = std::fopen(path.c_str(), "w");
    ASSERT_NE(nullptr, file);
    std::fclose(file);
  }
  EXPECT_EQ(std::vector<std::string>{"libSiteFilters.so"},
            PluginsThatMayTakeTheReceivedInstanceCallback({own, other}, own));
  EXPECT_EQ((std::vector<std::string>{"ingest-perf-renamed.so", "libSiteFilters.so"}),
            PluginsThatMayTakeTheReceivedInstanceCallback({own, other}));  // not known without its file
  std::vector<std::string> before;
  std::vector<std::string> after;
  SplitByLoadOrder(
    {own, other}, before, after, [](const std::string&) { return false; }, own);
  EXPECT_TRUE(before.empty());
  EXPECT_EQ(std::vector<std::string>{"libSiteFilters.so"}, after);
  std::remove(own.c_str());
  std::remove(other.c_str());
}


TEST(LoadedPlugins, PluginsAreSplitByWhetherTheyWereLoadedBeforeThisOne)
{
  std::vector<std::string> before;
  std::vector<std::string> after;
  SplitByLoadOrder({"/p/libOrthancPython.so", "/p/libOrthancIngestPerf.so", "/p/libOrthancDicomWeb.so"}, before, after,
                   [](const std::string& file) { return file == "/p/libOrthancPython.so"; });
  EXPECT_EQ(std::vector<std::string>{"libOrthancPython.so"}, before);
  EXPECT_EQ(std::vector<std::string>{"libOrthancDicomWeb.so"}, after);

  // By default, the process's shared objects: this test's own executable is no plugin file, the C
  // library is loaded already.
  before.clear();
  after.clear();
  SplitByLoadOrder({"/nonexistent/libOrthancPython.so"}, before, after);
  EXPECT_TRUE(before.empty());
  EXPECT_EQ(std::vector<std::string>{"libOrthancPython.so"}, after);
}


TEST(LoadedPlugins, TheLuaCallbacksTheScriptsDefineAreNamedAndNothingElse)
{
  TemporaryFolder folder;
  {
    std::ofstream(folder.Path() + "/a.lua") << "-- OnChange in a comment\n"
                                               "function  OnStoredInstance (instanceId, tags, metadata, origin)\n"
                                               "  print('function ReceivedInstanceFilter')\n"
                                               "end\n";
    std::ofstream(folder.Path() + "/b.lua") << "function IncomingHttpRequestFilter(method, uri, ip)\n"
                                               "  return true\nend\nfunction MyOwn() end\n";
  }
  EXPECT_EQ((std::vector<std::string>{"IncomingHttpRequestFilter", "OnStoredInstance"}),
            LuaCallbacksDefined({"a.lua", folder.Path() + "/b.lua", "missing.lua"}, folder.Path()));
  EXPECT_TRUE(LuaCallbacksDefined({}, folder.Path()).empty());
}


TEST(LoadedPlugins, TheHooksOrthancPythonsScriptRegistersAreNamedByOrthancsNames)
{
  TemporaryFolder folder;
  std::ofstream(folder.Path() + "/site.py") << "import orthanc\n"
                                               "orthanc.RegisterOnStoredInstanceCallback(on_stored)\n"
                                               "for register in (orthanc.RegisterIncomingCStoreInstanceFilter,):\n"
                                               "    register(refuse)\n"
                                               "  # orthanc.RegisterOnChangeCallback(f): a comment\n"
                                               "orthanc.RegisterReceivedInstanceCallbackOfMine(f)\n";
  EXPECT_EQ((std::vector<std::string>{"IncomingCStoreInstanceFilter", "OnStoredInstance"}),
            PythonCallbacksRegistered("site.py", folder.Path()));
  EXPECT_TRUE(PythonCallbacksRegistered("", folder.Path()).empty());
  EXPECT_TRUE(PythonCallbacksRegistered("missing.py", folder.Path()).empty());
}
