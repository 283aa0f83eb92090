"""The repository as a newcomer finds it, no Orthanc needed. The paths the docs and the scripts name:
none is a path of the machine they were written on (a home folder, the development machine's /work, a
file in /tmp given as a command's argument), and every path of this repository they name exists, so a
moved or renamed file cannot leave a stale command or link behind (links with anchors: test_readme.py).
The Python side is one installed package (pyproject.toml, ingest_perf/): the venv imports it from
anywhere, every module of it imports, every `python -m ingest_perf....` named is one of them, nothing
edits sys.path, and its version is the plugin's."""
import glob
import importlib
import itertools
import os
import pkgutil
import re
import subprocess
import sys
import tomllib

import ingest_perf


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Where the docs, the commands and the scripts are; vendored and generated files aside.
SCANNED = ["README.md", "NEWS", "CMakeLists.txt", "pyproject.toml", "docs", "Resources", "docker", ".ci",
           "ingest_perf", "IntegrationTests", "Benchmarks", "Plugin", "UnitTests", "Fuzzing"]
SKIPPED = ("Resources/ui/vendor/", "Fuzzing/corpus/", "docs/images/", "docs/measurements/benchmarks/")
TEXT = (".md", ".py", ".sh", ".cpp", ".h", ".c", ".js", ".html", ".css", ".json", ".txt", ".cmake", ".toml", ".map",
        "Dockerfile", "run", "NEWS", "CMakeLists.txt")

# An absolute path that starts a word: at the start of a line, after a space, a quote, a backtick, a
# parenthesis, "=" or ":".
START = r"(?:^|(?<=[\s`'\"(=:\[]))"
# Home folders and the development machine's own work folder.
MACHINE = re.compile(START + r"(/root|/home/[\w.-]+|/Users/[\w.-]+|/work)(?=/|\b)(?![\w-])")
# A file or folder of /tmp in a document: a path of one run on one machine, never a command to copy.
# Allowed: what other software fixes there (Orthanc's own suite, the comparison's lock file) and
# masked paths ("/tmp/<path>").
TMP = re.compile(START + r"/tmp/([\w.<>-]+)")
TMP_ALLOWED = {"OrthancStorage", "IntegrationTestsConfiguration.json", "DICOMDIR", "GETSCU",
               "compare-orthanc-suite.lock", "<path>"}
# A path of this repository: a top-level folder of it, then a file or folder name.
PREFIXES = ["docs", "Resources", "docker", ".ci", "ingest_perf", "IntegrationTests", "Benchmarks", "Plugin",
            "UnitTests", "Fuzzing"]
NAMED = re.compile(r"(?<![\w./$>}-])((?:%s)/[\w.*/-]*[\w*])" % "|".join(re.escape(p) for p in PREFIXES))


def scanned_files():
    for entry in SCANNED:
        path = os.path.join(REPO_ROOT, entry)
        if os.path.isfile(path):
            yield entry
            continue
        for folder, folders, files in os.walk(path):
            folders[:] = [f for f in folders if f != "__pycache__"]
            for name in files:
                relative = os.path.relpath(os.path.join(folder, name), REPO_ROOT)
                if name.endswith(TEXT) and not relative.startswith(SKIPPED):
                    yield relative


def lines():
    for relative in scanned_files():
        with open(os.path.join(REPO_ROOT, relative), encoding="utf-8", errors="replace") as stream:
            for number, line in enumerate(stream, 1):
                yield relative, number, line


def test_no_path_of_a_development_machine():
    found = []
    for relative, number, line in lines():
        if relative == "IntegrationTests/test_repository.py":
            continue
        if not relative.startswith(("UnitTests/", "Fuzzing/")):  # their made-up paths are test inputs
            found += ["%s:%d: %s" % (relative, number, m.group(0)) for m in MACHINE.finditer(line)]
        if relative.endswith(".md") or relative == "NEWS":
            found += ["%s:%d: /tmp/%s" % (relative, number, name) for name in TMP.findall(line)
                      if name not in TMP_ALLOWED]
    assert not found, "paths of a development machine (use a placeholder, $PWD, or a path of the repository):\n" + \
        "\n".join(found)


def exists(path):
    """A file or folder; or a name completed by an extension or a format (Fuzzing/MetaHeaderFuzzer,
    docs/measurements/benchmarks/results%s.json); or a pattern that matches."""
    return bool(glob.glob(os.path.join(REPO_ROOT, path.rstrip(".") + ("" if "*" in path else "*"))))


def test_every_repository_path_named_exists():
    missing = []
    for relative, number, line in lines():
        if relative == "NEWS":  # history: what a release changed, under the names of the time
            continue
        for path in NAMED.findall(line):
            if not exists(path):
                missing.append("%s:%d: %s" % (relative, number, path))
    assert not missing, "paths named that are not in the repository:\n" + "\n".join(missing)


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


def launchers():
    """The scripts without a file extension (the report's launcher), whose lines lines() skips."""
    for name in sorted(os.listdir(os.path.join(REPO_ROOT, "Resources"))):
        path = os.path.join(REPO_ROOT, "Resources", name)
        if os.path.isfile(path) and "." not in name:
            with open(path, encoding="utf-8", errors="replace") as stream:
                text = stream.read()
            if text.startswith("#!"):
                for number, line in enumerate(text.splitlines(), 1):
                    yield "Resources/" + name, number, line


def test_nothing_edits_sys_path():
    edits = []
    for relative, number, line in itertools.chain(lines(), launchers()):
        # Python files, and the scripts that run Python (a `python3 -c` string is Python too).
        if relative != "IntegrationTests/test_repository.py" and not relative.endswith(".md") and \
                re.search(r"sys\.path\s*(\.\s*(insert|append|extend|remove)\b|\[.*\]\s*=|\+?=)", line):
            edits.append("%s:%d: %s" % (relative, number, line.strip()))
    assert not edits, edits


def test_the_package_has_the_plugins_version():
    with open(os.path.join(REPO_ROOT, "pyproject.toml"), "rb") as stream:
        version = tomllib.load(stream)["project"]["version"]
    with open(os.path.join(REPO_ROOT, "CMakeLists.txt")) as stream:
        plugin = re.search(r"project\(OrthancIngestPerf VERSION ([\d.]+)", stream.read()).group(1)
    assert version == plugin
