"""The examples of the README and of docs/*.md, run for real: the configuration block, the shell
commands and the answers documented after them, and the /perf/stats example whose structure must
match a live answer key for key (only the lists and the definitions are shortened in it). A block is
run when `<!-- doc-test: KIND [options] -->` precedes it. Also: every relative link of these files
leads to a file, and a heading, that exist."""
import glob
import json
import os
import re
import subprocess

import pytest
import requests

from ingest_perf.stats_checks import wait_for, without_findings_of_a_busy_machine

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCUMENTS = [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "**", "*.md"),
                                                                  recursive=True))
MARKER = re.compile(r"(?m)^<!-- doc-test:")
BLOCK = re.compile(r"<!-- doc-test: (?P<kind>[a-z-]+)(?P<options>[^>]*)-->\s*```(?P<lang>\w+)\n(?P<body>.*?)```"
                   r"(?:\s*```json\n(?P<answer>.*?)```)?", re.DOTALL)
KINDS = {"configuration", "shell", "stats-example", "metrics-example", "diagnosis-example"}


def all_blocks():
    found = []
    for path in DOCUMENTS:
        text = open(path).read()
        matches = list(BLOCK.finditer(text))
        # A marker that no code block follows, or of an unknown kind, would silently test nothing.
        assert len(matches) == len(MARKER.findall(text)), "%s: a doc-test marker without its code block" % path
        for match in matches:
            assert match.group("kind") in KINDS, "%s: unknown doc-test kind %r" % (path, match.group("kind"))
        found += matches
    return found


def blocks(kind):
    return [m for m in all_blocks() if m.group("kind") == kind]


def documented_configuration():
    (block,) = blocks("configuration")
    return json.loads(block.group("body"))["IngestPerf"]


def same_shape(documented, actual, path="$"):
    """Every documented key exists with a compatible type; dicts have exactly the documented keys
    except where the example says it shortened them (lists, definitions) and the phases, whose
    names are the vocabulary's (test_rest_api.py checks every transport has each of them)."""
    if isinstance(documented, dict):
        assert isinstance(actual, dict), path
        if not path.startswith("$.definitions") and not path.endswith(".phases"):
            assert set(documented) == set(actual), "%s: documented %s vs live %s" % (path, sorted(documented),
                                                                                     sorted(actual))
        for key, value in documented.items():
            assert key in actual, "%s.%s missing from the live answer" % (path, key)
            same_shape(value, actual[key], "%s.%s" % (path, key))
    elif isinstance(documented, list):
        assert isinstance(actual, list), path
        if documented:  # an empty documented list says only that the key is a list
            assert actual, path
            same_shape(documented[0], actual[0], path + "[0]")
    elif isinstance(documented, bool):
        assert isinstance(actual, bool), path
    elif isinstance(documented, (int, float)):
        # a statistic is null while its phase has no sample (documented)
        assert actual is None or (isinstance(actual, (int, float)) and not isinstance(actual, bool)), path
    elif isinstance(documented, str):
        assert isinstance(actual, str), path


@pytest.fixture
def readme_orthanc(orthanc_factory, series):
    orthanc = orthanc_factory(ingest_perf=documented_configuration())
    orthanc.storescu(series[:5])
    # The documented answer is the one after storescu has gone (its association finished).
    wait_for(orthanc, lambda s: s["associations"]["openConnections"]["count"] == 0)
    return orthanc


def run_shell(body, orthanc):
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", body], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, ORTHANC=orthanc.url))
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_documented_defaults_are_the_defaults(orthanc):
    assert orthanc.stats()["configuration"] == documented_configuration()


def test_configuration_block_starts_orthanc(readme_orthanc):
    assert readme_orthanc.stats()["configuration"] == documented_configuration()


def test_shell_examples_and_their_answers(readme_orthanc):
    examples = blocks("shell")
    assert len(examples) >= 3
    for block in examples:
        body = block.group("body")
        output = run_shell(body, readme_orthanc)
        answer = json.loads(output)
        status = re.search(r"expect-status=(\d+)", block.group("options"))
        if status:
            url = re.search(r'"\$ORTHANC(/[^"]*)"', body).group(1)
            assert requests.get(readme_orthanc.url + url).status_code == int(status.group(1))
        if block.group("answer"):
            assert answer == json.loads(block.group("answer")), body


def same_order(documented, actual, path="$"):
    """The members of every object come in the documented order: /perf/stats is written member by
    member, in the order of its schema, which the example shows (a shortened list keeps its order)."""
    if isinstance(documented, dict) and isinstance(actual, dict):
        common = [key for key in documented if key in actual]
        assert common == [key for key in actual if key in documented], \
            "%s: documented %s vs live %s" % (path, common, [key for key in actual if key in documented])
        for key in common:
            same_order(documented[key], actual[key], "%s.%s" % (path, key))
    elif isinstance(documented, list) and isinstance(actual, list) and documented and actual:
        same_order(documented[0], actual[0], path + "[0]")


def test_stats_example_has_the_live_structure(readme_orthanc):
    (example,) = blocks("stats-example")
    documented = json.loads(example.group("body"))
    live = readme_orthanc.stats(transport="dicom")
    same_shape(documented, live)
    same_order(documented, live)
    # and the shell example that fetches it is the same request
    (fetch,) = [b for b in blocks("shell") if "/perf/stats?transport=dicom\"" in b.group("body")]
    assert fetch


def test_diagnosis_example_has_the_live_structure(orthanc, series_factory):
    (example,) = blocks("diagnosis-example")
    documented = json.loads(example.group("body"))
    orthanc.storescu(series_factory(15, 61, size=64))  # enough gaps for the stall to be judged
    live = orthanc.get("/perf/diagnosis").json()
    _, findings = without_findings_of_a_busy_machine(live, [], documented["findings"][0]["id"])
    assert findings and findings[0]["id"] == documented["findings"][0]["id"]
    # the shape of the answer with the documented finding first, whatever a busy machine added
    live["findings"] = findings
    same_shape(documented, live)


def metric_series(text):
    """{(name, label names)} of every sample line of a Prometheus text, and the `le` values seen."""
    series, les = set(), set()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, labels = line.rsplit(" ", 1)[0].partition("{")
            pairs = re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', labels)
            series.add((name, tuple(sorted(k for k, _ in pairs if k != "le"))))
            les.update(v for k, v in pairs if k == "le")
    return series, les


def test_metrics_example_names_only_live_series(readme_orthanc):
    (example,) = blocks("metrics-example")
    documented, documented_les = metric_series(example.group("body"))
    live, live_les = metric_series(readme_orthanc.get("/perf/metrics").text)
    assert documented <= live, documented - live
    assert documented_les == live_les


def heading_anchors(path):
    """The anchors GitHub gives the headings of a Markdown file (outside code blocks)."""
    anchors = set()
    text = re.sub(r"```.*?```", "", open(path).read(), flags=re.DOTALL)
    for heading in re.findall(r"(?m)^#+ (.+)$", text):
        anchor = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(anchor)
    return anchors


def test_relative_links_lead_somewhere():
    """The reference moved from the README to docs/: a link to a file or a heading that is not there
    is an error."""
    broken = []
    checked = 0
    for path in DOCUMENTS:
        text = re.sub(r"```.*?```", "", open(path).read(), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            file, _, anchor = target.partition("#")
            linked = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            checked += 1
            if not os.path.exists(linked):
                broken.append("%s: %s (no such file)" % (os.path.relpath(path, REPO), target))
            elif anchor and linked.endswith(".md") and anchor not in heading_anchors(linked):
                broken.append("%s: %s (no such heading)" % (os.path.relpath(path, REPO), target))
    assert checked > 20
    assert not broken, "\n".join(broken)


def test_the_index_of_the_docs_lists_every_document():
    """docs/README.md: the reference, then the measurements; a document it does not list is lost."""
    index = os.path.join(REPO, "docs", "README.md")
    listed = {os.path.normpath(os.path.join(REPO, "docs", target.partition("#")[0]))
              for target in re.findall(r"\]\(([^)\s]+)\)", open(index).read()) if not re.match(r"[a-z]+:", target)}
    missing = [os.path.relpath(path, REPO) for path in DOCUMENTS
               if path not in listed and path != index and os.path.dirname(path) != REPO]
    assert not missing, missing
