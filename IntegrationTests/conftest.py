"""pytest fixtures for the integration tests: the built plugin, synthetic series, real Orthancs.

Run with: .venv/bin/python -m pytest IntegrationTests -q
The plugin is taken from $INGEST_PERF_PLUGIN or <repo>/build/libOrthancIngestPerf.so.
"""
import os

import pytest

from ingest_perf.generate_series import write_series
from ingest_perf.orthanc_process import BUILD_COMMAND, HOST_ORTHANC, OrthancProcess, default_plugin_path

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A test module that sets ORTHANC_VERSIONS = BOTH_ORTHANCS (orthanc_process) runs each of its tests
# against Debian 12's Orthanc 1.10.1 and Debian 13's 1.12.7 (in the root of
# Resources/make-debian13-root.sh, which the test command makes); other modules run against 1.10.1.


def pytest_generate_tests(metafunc):
    chosen = any("orthanc_version" in str(marker.args[0]) for marker in metafunc.definition.iter_markers("parametrize"))
    if "orthanc_version" in metafunc.fixturenames and not chosen:  # a test may name its own versions
        versions = getattr(metafunc.module, "ORTHANC_VERSIONS", [HOST_ORTHANC])
        metafunc.parametrize("orthanc_version", versions, scope="module")


@pytest.fixture(scope="module")
def orthanc_version():
    """The Orthanc the test runs against (parametrized by pytest_generate_tests)."""
    return HOST_ORTHANC


@pytest.fixture(scope="session")
def repo_root():
    return REPO_ROOT


@pytest.fixture(scope="session")
def plugin_path():
    path = default_plugin_path()
    if not os.path.isfile(path):
        pytest.fail("plugin not built: %s is missing. Build it with:\n  %s\n(or set INGEST_PERF_PLUGIN)"
                    % (path, BUILD_COMMAND), pytrace=False)
    return path


@pytest.fixture(scope="session")
def series_factory(tmp_path_factory):
    """series_factory(count, seed, size=512) -> list of file paths; each series is written once."""
    cache = {}

    def make(count, seed, size=512):
        key = (count, seed, size)
        if key not in cache:
            folder = tmp_path_factory.mktemp("series-%d-seed%d-%d" % (count, seed, size))
            cache[key] = write_series(str(folder), count, seed=seed, rows=size, columns=size)
        return list(cache[key])

    return make


@pytest.fixture(scope="session")
def series(series_factory):
    """12 slices of 512x512, seed 1."""
    return series_factory(12, 1)


@pytest.fixture
def orthanc_factory(tmp_path, plugin_path, orthanc_version):
    """orthanc_factory(**OrthancProcess kwargs) -> a started OrthancProcess; all stopped at teardown.

    work_dir defaults to a new folder under tmp_path; plugin_path defaults to the built plugin
    (pass plugin_path=None for an Orthanc without the plugin); orthanc defaults to the module's
    Orthanc version (orthanc_version). Pass start=False to get the
    object unstarted (e.g. to call start_expect_failure()).
    """
    started = []

    def make(start=True, **kwargs):
        kwargs.setdefault("work_dir", str(tmp_path / ("orthanc%d" % len(started))))
        kwargs.setdefault("plugin_path", plugin_path)
        kwargs.setdefault("orthanc", orthanc_version)
        process = OrthancProcess(**kwargs)
        started.append(process)
        if start:
            process.start()
        return process

    yield make
    for process in started:
        process.stop()


@pytest.fixture
def orthanc(orthanc_factory):
    """A started Orthanc with the plugin and its default configuration."""
    return orthanc_factory()
