"""The guest matrix for a site's native plugins (guest_matrix.py says what is compared): the tests'
own IntegrationTests/Plugins/SiteFilters.c (IncomingCStoreInstanceFilter refusing some, the
ReceivedInstanceCallback) beside orthanc-dicomweb; orthanc-gdcm transcoding ingest to JPEG lossless
(C-STORE only: GDCM's writer on an HTTP thread crashes Orthanc with or without this plugin,
test_coexistence.py); orthanc-postgresql as index and storage area, against a throw-away PostgreSQL,
beside orthanc-dicomweb. Each with this plugin listed before them, after them, and in one folder with
them, loaded first then last, against a run without this plugin, on Orthanc 1.10.1 and 1.12.7."""
import pytest

from guest_matrix import (Case, CaseRuns, Inputs, case_positions, checks, gdcm_problems, judge,
                          postgresql_problems, site_filters_problems)
from ingest_perf.orthanc_process import ALL_ORTHANCS

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against each

ALL_PATHS = ("storescu", "http", "stow")
CASES = [
    Case("c-plugin", ["site-filters", "dicomweb"], ALL_PATHS, checks(site_filters_problems)),
    Case("gdcm", ["gdcm"], ("storescu",), checks(gdcm_problems), gdcm_transcoding=True),
    Case("postgresql", ["postgresql-index", "postgresql-storage", "dicomweb"], ALL_PATHS, checks(postgresql_problems)),
]
PAIRS, IDS = case_positions(CASES)
RUNS = CaseRuns()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return Inputs(tmp_path_factory)


@pytest.mark.parametrize("case, position", PAIRS, ids=IDS)
def test_the_site_plugins_see_and_store_the_same_with_the_plugin(case, position, orthanc_version, orthanc_factory,
                                                                 plugin_path, inputs, tmp_path, request):
    runs = RUNS.get(case, orthanc_version, orthanc_factory, plugin_path, inputs, tmp_path, request)
    found = judge(case, runs, position, inputs)
    assert not found, "with the plugin %s, %s on %s:\n%s" % (position, case.name, orthanc_version,
                                                             "\n".join(found[:60]))
