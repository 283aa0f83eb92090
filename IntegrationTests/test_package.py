"""The Python side is one installed package (pyproject.toml, ingest_perf/), no Orthanc needed: the venv
imports it from anywhere, every module of it imports, every `python -m ingest_perf....` that the docs
and scripts name is one of them, nothing edits sys.path, and its version is the plugin's."""
import importlib
import os
import pkgutil
import re
import subprocess
import sys
import tomllib

import ingest_perf
from test_paths_named import REPO_ROOT, lines


def test_the_venv_imports_the_package_as_installed():
    # -I: neither the current folder nor PYTHONPATH on sys.path; from / the repository is not there either.
    result = subprocess.run([sys.executable, "-I", "-c", "import ingest_perf.orthanc_process, ingest_perf; "
                             "print(ingest_perf.__file__)"], cwd="/", capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == os.path.join(REPO_ROOT, "ingest_perf", "__init__.py")  # editable: this checkout


def test_every_module_imports():
    names = [m.name for m in pkgutil.walk_packages(ingest_perf.__path__, "ingest_perf.")]
    assert "ingest_perf.benchmarks.run_benchmarks" in names and "ingest_perf.bottleneck_scenarios" in names
    for name in names:
        importlib.import_module(name)  # the suite's runners only define functions when imported


def test_every_module_command_named_exists():
    named = set()
    for relative, number, line in lines():
        named.update((module.rstrip("."), "%s:%d" % (relative, number))
                     for module in re.findall(r"-m (ingest_perf[\w.]*)", line) if not re.search(r"[A-Z]", module))
    assert named
    missing = [(module, where) for module, where in sorted(named) if importlib.util.find_spec(module) is None]
    assert not missing, missing


def test_nothing_edits_sys_path():
    edits = []
    for relative, number, line in lines():
        if relative.endswith(".py") and relative != "IntegrationTests/test_package.py" and \
                re.search(r"sys\.path\s*(\.\s*(insert|append|extend|remove)\b|\[.*\]\s*=|\+?=)", line):
            edits.append("%s:%d: %s" % (relative, number, line.strip()))
    assert not edits, edits


def test_the_package_has_the_plugins_version():
    with open(os.path.join(REPO_ROOT, "pyproject.toml"), "rb") as stream:
        version = tomllib.load(stream)["project"]["version"]
    with open(os.path.join(REPO_ROOT, "CMakeLists.txt")) as stream:
        plugin = re.search(r"project\(OrthancIngestPerf VERSION ([\d.]+)", stream.read()).group(1)
    assert version == plugin
