"""The guest matrix for a site's scripts (guest_matrix.py says what is compared): orthanc-python
running IntegrationTests/SiteScripts/site_hooks.py (ReceivedInstanceCallback modifying every
instance, IncomingCStoreInstanceFilter refusing some, IncomingHttpRequestFilter, OnStoredInstance,
OnChange) beside orthanc-dicomweb, with this plugin listed before them, after them, and in one folder
with them, loaded first then last; Lua (IntegrationTests/SiteScripts/site_filters.lua:
ReceivedInstanceFilter refusing some, OnStoredInstance) beside orthanc-dicomweb, with this plugin
listed (Lua scripts are not plugins: one position). Each against a run without this plugin, on
Orthanc 1.10.1 and 1.12.7."""
import pytest

from guest_matrix import Case, CaseRuns, Inputs, case_positions, checks, judge, lua_problems, python_problems
from ingest_perf.orthanc_process import ALL_ORTHANCS

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against each

ALL_PATHS = ("storescu", "http", "stow")
CASES = [
    Case("python", ["python", "dicomweb"], ALL_PATHS, checks(python_problems)),
    Case("lua", ["dicomweb"], ALL_PATHS, checks(lua_problems), lua=True, positions=("listed",)),
]
PAIRS, IDS = case_positions(CASES)
RUNS = CaseRuns()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return Inputs(tmp_path_factory)


@pytest.mark.parametrize("case, position", PAIRS, ids=IDS)
def test_the_site_scripts_see_and_store_the_same_with_the_plugin(case, position, orthanc_version, orthanc_factory,
                                                                 plugin_path, inputs, tmp_path, request):
    runs = RUNS.get(case, orthanc_version, orthanc_factory, plugin_path, inputs, tmp_path, request)
    found = judge(case, runs, position, inputs)
    assert not found, "with the plugin %s, %s on %s:\n%s" % (position, case.name, orthanc_version,
                                                             "\n".join(found[:60]))
