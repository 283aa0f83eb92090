"""The page of /perf/ui/ in a real browser: Debian's headless Chromium, driven by Selenium through
Debian's chromedriver, on a real Orthanc behind its authentication that has just ingested a series
by storescu and one by HTTP. The page loads with no console error, every chart has data, every figure
it shows is the one /perf/stats, /perf/diagnosis or /perf/slowest answers for the same window (the
page marks each with data-source, data-path and data-value), the evidence of a finding included, the
trace button saves a Chrome trace, reset asks first, the controls work from the keyboard, a 400 px
wide window scrolls no sideways and a refresh moves nothing. At 800 px every column header and every
cell is whole (nothing cut, no "..."), dates are in one format (the browser's locale, 24-hour, the
time zone said). Where each phase's time goes (its parts: on a CPU, waiting for a CPU, blocked) shows the
figures /perf/stats answers, the parts named and defined as /perf/vocabulary says, and says when waiting
for a CPU is not observable. Orthanc Explorer links to the page (its home page and its Plugins page,
RootUri) and the page back to it; /perf/ui/?window=15m keeps its window. The files are embedded in the plugin,
with their types, and need Orthanc's credentials like every route. Screenshots of the page are saved
in build/ui-screenshot.png (1280 px, $INGEST_PERF_UI_SCREENSHOT) and build/ui-screenshot-800.png, and its
section of where each phase's time goes in build/ui-screenshot-parts-800.png."""
import base64
import decimal
import hashlib
import json
import math
import os
import re
import time

import pytest
import requests

from ingest_perf.orthanc_process import ALL_ORTHANCS, HOST_ORTHANC, OrthancProcess
from ingest_perf.stats_checks import stored, wait_for

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UI_FOLDER = os.path.join(REPO_ROOT, "Resources", "ui")
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
USER, PASSWORD = "perf-reader", "change-me"
CALLING_AETS = ["CT_ROOM1", "MR_SCANNER_ROOM2", "CR_ER"]  # one of 16 characters, the longest an AET has
TIME_ZONE = "Europe/Brussels"  # the browser's: not the machine's UTC, so that a date left in UTC shows
SCREENSHOT = os.environ.get("INGEST_PERF_UI_SCREENSHOT") or os.path.join(REPO_ROOT, "build", "ui-screenshot.png")
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".txt": "text/plain; charset=utf-8", ".svg": "image/svg+xml"}


def ui_files():
    return sorted(os.path.relpath(os.path.join(folder, name), UI_FOLDER).replace(os.sep, "/")
                  for folder, _, names in os.walk(UI_FOLDER) for name in names)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, plugin_path, orthanc_version, series_factory):
    """An Orthanc behind its authentication that has stored 30 instances by storescu and 30 by HTTP, in
    three rounds 6 s apart (the charts of 10 s slots get a point per round), each round's association
    from its own calling AET (one AET's would be one chain, with the pauses for gaps); every instance has
    its phases split into parts."""
    orthanc = OrthancProcess(str(tmp_path_factory.mktemp("ui-orthanc")), plugin_path=plugin_path,
                             orthanc=orthanc_version, ingest_perf={"PhasePartsSampling": 1},
                             extra_config={"AuthenticationEnabled": True, "RegisteredUsers": {USER: PASSWORD}})
    orthanc.start()
    try:
        files = series_factory(60, 71, size=64)
        for round in range(3):
            if round:
                time.sleep(6)
            orthanc.storescu(files[10 * round:10 * round + 10], calling_aet=CALLING_AETS[round])
            # the session holds the credentials
            orthanc.http_upload(files[30 + 10 * round:40 + 10 * round], session=orthanc.session)
        wait_for(orthanc, lambda s: stored(s, "all") == 60)
        yield orthanc
    finally:
        orthanc.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.fail("Debian's chromium and chromium-driver are needed: run Resources/install-dependencies.sh",
                    pytrace=False)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    downloads = str(tmp_path_factory.mktemp("ui-downloads"))
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--lang=en-US",
                     "--window-size=1280,1000", "--no-first-run", "--disable-background-networking"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"download.default_directory": downloads,
                                              "download.prompt_for_download": False})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER, env=dict(os.environ, TZ=TIME_ZONE)), options=options)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    driver.downloads = downloads
    try:
        yield driver
    finally:
        driver.quit()


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def wait(driver, condition, timeout=20, what="the page"):
    deadline = time.time() + timeout
    while True:
        value = driver.execute_script(condition)
        if value:
            return value
        if time.time() > deadline:
            status = driver.execute_script("var s = document.getElementById('status'); return s && s.textContent")
            raise AssertionError("%s: %r not true after %s s (status: %r)" % (what, condition, timeout, status))
        time.sleep(0.1)


def refreshes(driver):
    return int(driver.execute_script("return document.body.dataset.refreshes || '0'"))


def wait_for_refresh(driver, after=None):
    """Until the page has drawn a refresh newer than `after` (default: the one shown now)."""
    count = refreshes(driver) if after is None else after
    wait(driver, "return Number(document.body.dataset.refreshes || 0) > %d" % count, what="a refresh")
    return refreshes(driver)


def leave_page(driver):
    """Away from any page of an earlier test (whose refreshes may hit an Orthanc stopped since), and
    its console messages forgotten."""
    driver.get("about:blank")
    driver.get_log("browser")


def open_page(driver, orthanc, path="/perf/ui/"):
    """The page as an administrator opens it: the browser logs in with Orthanc's credentials."""
    leave_page(driver)
    driver.get("http://%s:%s@127.0.0.1:%d%s" % (USER, PASSWORD, orthanc.http_port, path))
    wait_for_refresh(driver, 0)


def save_screenshot(driver, orthanc_version):
    """The whole page, 1280 px wide, as the documentation shows it (docs/images/perf-ui.png is one)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, height + 120)
    wait_for_refresh(driver)
    path = SCREENSHOT if orthanc_version == HOST_ORTHANC else SCREENSHOT.replace(".png", "-%s.png" % orthanc_version)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    assert driver.save_screenshot(path)
    driver.set_window_size(1280, 1000)


def shown_figures(driver):
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('[data-source][data-path]')).map(e => ({
          source: e.dataset.source, path: e.dataset.path, value: JSON.parse(e.dataset.value),
          text: e.textContent, varies: e.dataset.varies || null, scale: Number(e.dataset.scale || 1)}));""")


def at(document, path):
    value = document
    for part in path.split("/"):
        value = value[int(part)] if isinstance(value, list) else value.get(part)
    return value


def answers(orthanc, window):
    get = lambda path, **params: orthanc._check(orthanc.get(path, params=params)).json()  # noqa: E731
    return {"stats": get("/perf/stats", window=window), "diagnosis": get("/perf/diagnosis", window=window),
            "slowest": get("/perf/slowest", window=window, n=10), "series": get("/perf/slots", window=window),
            "hour": get("/perf/slots", window="1h")}


def mismatches(figures, documents):
    """The figures of the page that are not what the answers say: exactly, or within 20% for the
    few that move with the clock alone (rates over a window that is still filling). A share shown
    in % (data-scale 100) is the value times 100, rounded to a whole number."""
    wrong = []
    for figure in figures:
        expected = at(documents[figure["source"]], figure["path"])
        shown = figure["value"]
        if figure["varies"] == "time":
            if shown != pytest.approx(expected, rel=0.2, abs=0.05):
                wrong.append((figure["path"], shown, expected))
        elif shown != expected:
            wrong.append((figure["path"], shown, expected))
        elif isinstance(shown, float) and figure["text"]:
            # and the text is the value, rounded
            assert abs(float(figure["text"]) - figure["scale"] * shown) <= (0.05 if figure["scale"] == 1 else 0.5), \
                figure
    return wrong


def test_the_files_are_embedded_typed_and_behind_orthancs_authentication(ingested):
    anonymous = requests.Session()
    for path in ["/perf/ui", "/perf/ui/", "/perf/ui/index.html", "/perf/ui/ui.js", "/perf/slots", "/perf/ui/nothing"]:
        assert anonymous.get(ingested.url + path, allow_redirects=False).status_code == 401, path

    session = requests.Session()
    session.auth = (USER, PASSWORD)
    # Orthanc drops the trailing slash before a plugin sees the URL: both end on the page, relatively.
    for path, hops in (("/perf/ui/", ["ui/index.html", "../index.html"]), ("/perf/ui", ["ui/index.html"])):
        answer = session.get(ingested.url + path)
        assert answer.status_code == 200 and answer.url == ingested.url + "/perf/ui/index.html"
        assert [hop.headers["Location"] for hop in answer.history] == hops
    # The window asked for is kept across both redirections; nothing else of the query is.
    for query, kept in (("?window=15m", "?window=15m"), ("?window=15m&x=%22%3E%3Cscript%3E", "?window=15m"),
                        ("?window=2h", ""), ("?x=1", "")):
        answer = session.get(ingested.url + "/perf/ui/" + query)
        assert answer.status_code == 200 and answer.url == ingested.url + "/perf/ui/index.html" + kept, query
        assert [hop.headers["Location"] for hop in answer.history] == ["ui/index.html" + kept, "../index.html" + kept]
    files = ui_files()
    assert {"index.html", "ui.js", "ui.css", "icon.svg"} <= set(files)
    for name in files:
        answer = session.get(ingested.url + "/perf/ui/" + name)
        assert answer.status_code == 200, name
        assert answer.headers["Content-Type"] == TYPES[os.path.splitext(name)[1]], name
        assert answer.content == open(os.path.join(UI_FOLDER, name), "rb").read(), name
        assert "default-src 'none'" in answer.headers["Content-Security-Policy"]
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
    for path in ["/perf/ui/nothing.js", "/perf/ui/vendor", "/perf/ui/ui/ui.js", "/perf/ui/INDEX.HTML"]:
        answer = session.get(ingested.url + path, allow_redirects=False)
        assert answer.status_code == 404 and answer.json()["page"] == "/perf/ui/index.html", path
    assert session.post(ingested.url + "/perf/ui/index.html").status_code == 405
    assert session.delete(ingested.url + "/perf/ui").status_code == 405

    # Self-contained: the page names only its own files and, relatively, Orthanc Explorer.
    page = open(os.path.join(UI_FOLDER, "index.html")).read()
    referenced = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert referenced and all(name in files or name == "../../app/explorer.html" for name in referenced), referenced
    for name in ("index.html", "ui.js", "ui.css"):
        assert not re.search(r"(?:https?:)?//[a-z]", re.sub(r"//[^\n]*|/\*.*?\*/", "",
                                                            open(os.path.join(UI_FOLDER, name)).read(),
                                                            flags=re.DOTALL)), name


def test_the_vendored_chart_library_is_the_documented_one():
    """docs/ui.md names the uPlot version and the SHA-256 of each vendored file, as npm packs them."""
    doc = open(os.path.join(REPO_ROOT, "docs", "ui.md")).read()
    version = re.search(r"is \[uPlot\]\([^)]*\) (\d+\.\d+\.\d+)", doc).group(1)
    vendored = [name for name in ui_files() if name.startswith("vendor/")]
    assert sorted(vendored) == ["vendor/uPlot-%s.%s" % (version, ext) for ext in ("LICENSE.txt", "iife.min.js", "min.css")]
    script = open(os.path.join(UI_FOLDER, "vendor", "uPlot-%s.iife.min.js" % version)).read()
    assert script.startswith("/*! https://github.com/leeoniya/uPlot (v%s) */" % version)
    assert "MIT License" in open(os.path.join(UI_FOLDER, "vendor", "uPlot-%s.LICENSE.txt" % version)).read()
    for name in vendored:
        digest = hashlib.sha256(open(os.path.join(UI_FOLDER, name), "rb").read()).hexdigest()
        assert digest in doc, name


def test_the_page_shows_what_the_routes_answer(ingested, browser, orthanc_version):
    open_page(browser, ingested)
    assert browser.current_url.endswith("/perf/ui/index.html")
    assert browser.find_element("id", "orthanc-version").text == orthanc_version
    assert browser.execute_script("return document.body.dataset.window") == "5m"  # the default
    save_screenshot(browser, orthanc_version)
    # The window chosen from the keyboard: the selector is focused and moved down by one.
    from selenium.webdriver.common.keys import Keys
    selector = browser.find_element("id", "window")
    assert selector.get_attribute("value") == "5m"
    selector.send_keys(Keys.DOWN)
    wait(browser, "return document.body.dataset.window === '15m'", what="the 15m window")
    assert browser.execute_script("return location.search") == "?window=15m"  # kept by a reload

    for attempt in range(3):  # a figure may change between the page's reading and ours (an association ends)
        wait_for_refresh(browser)
        figures = shown_figures(browser)
        wrong = mismatches(figures, answers(ingested, "15m"))
        if not wrong:
            break
    assert not wrong, wrong
    sources = {figure["source"] for figure in figures}
    assert sources == {"stats", "diagnosis", "slowest"}, sources
    paths = {figure["path"] for figure in figures}
    for path in ("transports/dicom/instances/stored", "transports/rest/phases/serverTotal/p99",
                 "transports/dicom/phases/associationGap/mean", "associations/byRemoteAet/0/gap/p50",
                 "instances/0/phases/serverTotal", "configuration/TimedStorage", "findings/0/costMsPerInstance",
                 "transports/dicom/phases/persist/parts/onCpu/mean", "configuration/PhasePartsSampling",
                 "transports/rest/phases/receive/parts/blocked/share",
                 "transports/rest/phases/persist/parts/waitingForCpu/share"):
        assert path in paths, path
    # Every figure of the evidence too (a summary's figures one by one: .../associationGap/p99Ms).
    documents = answers(ingested, "15m")
    for i, finding in enumerate(documents["diagnosis"]["findings"]):
        for key, value in finding["evidence"].items():
            if isinstance(value, dict):
                assert {"findings/%d/evidence/%s/%s" % (i, key, k) for k in value} <= paths, (key, value)
            elif not isinstance(value, list):
                assert "findings/%d/evidence/%s" % (i, key) in paths, key
    # The evidence: labelled figures (name, figure, unit), not JSON.
    evidence = browser.execute_script("""
        const list = document.querySelector('.finding details dl.evidence');
        return {pre: document.querySelectorAll('.finding pre').length,
                names: Array.from(list.querySelectorAll('dt')).map(e => e.textContent),
                text: list.textContent};""")
    assert evidence["pre"] == 0 and "associationGap" in evidence["names"]
    assert "{" not in evidence["text"] and '"' not in evidence["text"] and " ms" in evidence["text"]

    # Every chart has data, and the series charts add up to the window.
    documents = answers(ingested, "15m")
    data = browser.execute_script("""
        const d = (id) => Object.assign({}, document.getElementById(id).dataset);
        return {breakdown: d('breakdown-bars'), throughput: d('throughput-chart'), latency: d('latency-chart'),
                slowest: d('slowest-table'), canvases: document.querySelectorAll('canvas').length};""")
    vocabulary = ingested.get("/perf/vocabulary").json()["phases"]  # an instance's cycle, as the page draws it
    parts = [p["name"] for p in vocabulary if p["place"] == "before"] + [p["name"] for p in vocabulary
                                                                         if p["partOfServerTotal"]]
    cycle = [(t, phase) for t in ("dicom", "rest") for phase in parts
             if documents["stats"]["transports"][t]["phases"][phase].get("count")]
    # a segment per phase of each cycle: C-STORE's gap, preStore, persist; HTTP's requestGap (one session, kept
    # alive), receive, preStore, persist
    assert len(cycle) == 7 and int(data["breakdown"]["points"]) == len(cycle)
    assert int(data["throughput"]["points"]) > 0 and int(data["latency"]["points"]) > 0
    assert int(data["slowest"]["points"]) == 10 and data["canvases"] == 2
    assert json.loads(data["throughput"]["stored"]) == {
        t: documents["stats"]["transports"][t]["instances"]["stored"] for t in ("dicom", "rest", "plugin", "job")}
    assert data["latency"]["transport"] == "all" and data["latency"]["window"] == "15m"
    phases = documents["stats"]["transports"]["all"]["phases"]
    assert json.loads(data["latency"]["counts"]) == {
        name: phase["count"] for name, phase in phases.items() if phase.get("count")}
    assert not console_errors(browser)


def format_ms(value):
    """A duration as the page writes it (formatMs: 3 decimals under 1 ms, 2 under 100, else 1), rounded as
    JavaScript's toFixed does: the exact value of the double, a tie upwards."""
    digits = 3 if value < 1 else 2 if value < 100 else 1
    return str(decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_HALF_UP))


def format_share(value):
    """A share as the page writes it, in % (Math.round: a tie upwards)."""
    return str(math.floor(100 * value + 0.5))


def timeline_order(vocabulary):
    """The phases in the order of an instance's timeline: the gaps before it, its phases, what comes after."""
    placed = lambda *places: [p["name"] for p in vocabulary["phases"] if p["place"] in places]  # noqa: E731
    return placed("before") + placed("inside", "instance") + placed("after")


def shown_parts(driver):
    """Per bar of the section of where each phase's time goes: its transport and phase, its label, the
    text under it, its segments and what it says to a screen reader; and the section's other texts."""
    return driver.execute_script("""
        const section = document.getElementById('parts');
        const rows = Array.from(section.querySelectorAll('.bar-row')).map(row => {
          const bar = row.querySelector('.bar');
          return {transport: row.dataset.transport, phase: row.dataset.phase,
                  label: row.querySelector('.bar-label').textContent, parts: row.querySelector('.parts').textContent,
                  role: bar.getAttribute('role'), aria: bar.getAttribute('aria-label'),
                  segments: Array.from(bar.children).map(s => s.className)};
        });
        return {rows: rows,
                groups: Array.from(section.querySelectorAll('.parts-group h3')).map(h => h.textContent),
                notes: Array.from(section.querySelectorAll('.parts-group .note')).map(n => n.textContent),
                legend: Array.from(section.querySelectorAll('#parts-legend li')).map(li => li.textContent),
                points: Number(document.getElementById('parts-bars').dataset.points)};""")


def expected_parts(stats, vocabulary):
    """[(transport, phase, parts)] that the section shows: the phases with split instances of each
    transport, in the order of an instance's timeline."""
    order = timeline_order(vocabulary)
    return [(t, phase, stats["transports"][t]["phases"][phase]["parts"]) for t in ("dicom", "rest")
            for phase in order if (stats["transports"][t]["phases"].get(phase, {}).get("parts") or {}).get("sampled")]


def check_parts(shown, stats, vocabulary, waiting_unobservable=False):
    """The section says what /perf/stats answers: a bar per phase with split instances, each part's mean
    in ms and share in % as the page writes them, a segment per part that is observable; the names and
    definitions of the parts are the vocabulary's."""
    names = [part["name"] for part in vocabulary["phaseParts"]]
    assert names == ["onCpu", "waitingForCpu", "blocked"]  # the figures this test expects
    assert shown["legend"] == ["%s: %s" % (part["name"], part["definition"]) for part in vocabulary["phaseParts"]]
    expected = expected_parts(stats, vocabulary)
    assert [(row["transport"], row["phase"]) for row in shown["rows"]] == [(t, p) for t, p, _ in expected]
    assert {"persist", "serverTotal", "associationGap", "requestGap", "receive"} <= {p for _, p, _ in expected}
    segments = 0
    for row, (transport, phase, parts) in zip(shown["rows"], expected):
        assert row["label"].startswith("%s: %s ms" % (phase, format_ms(parts["mean"]))), row
        said = []
        for name in names:
            part = parts[name]
            if part.get("observable") is False:
                continue
            label = name + (" (includes waiting for a CPU)" if part.get("includesWaitingForCpuOf") == parts["sampled"]
                            else "")
            said.append("%s %s ms (%s%%)" % (label, format_ms(part["mean"]), format_share(part["share"])))
            assert "p-%s" % name in " ".join(row["segments"]), row
        assert row["parts"] == " \u00b7 ".join(said), (row, parts)
        assert row["role"] == "img" and row["aria"].endswith("%s: %s" % (phase, ", ".join(said) + (
            ", waitingForCpu not observable" if waiting_unobservable else ""))), row
        assert len(row["segments"]) == len(said) == (2 if waiting_unobservable else 3)
        segments += len(said)
    assert shown["points"] == segments
    for transport in ("dicom", "rest"):
        sampled = max(p["sampled"] for t, _, p in expected if t == transport)
        assert any(group.endswith(": over %d split instances (every instance, PhasePartsSampling)" % sampled)
                   for group in shown["groups"]), shown["groups"]


def test_where_each_phase_s_time_goes_is_what_the_stats_answer(ingested, browser):
    """A bar per phase with split instances, per transport: its parts' means and shares as /perf/stats
    answers them for the window, the parts named and defined by /perf/vocabulary."""
    open_page(browser, ingested)
    vocabulary = ingested.get("/perf/vocabulary").json()
    for attempt in range(3):  # the page's reading and ours of the same 5 minutes
        wait_for_refresh(browser)
        shown = shown_parts(browser)
        stats = answers(ingested, "5m")["stats"]
        figures = [f for f in shown_figures(browser) if "/parts/" in f["path"] or "PhasePartsSampling" in f["path"]]
        if not mismatches(figures, {"stats": stats}):
            break
    assert not mismatches(figures, {"stats": stats})
    assert len(figures) > 30
    check_parts(shown, stats, vocabulary)
    assert shown["notes"] == []  # the kernel gives every thread's run delay here
    assert not console_errors(browser)


# The answer of a kernel that gives no run delay (no /proc/thread-self/schedstat), made from this one's in
# the browser: waitingForCpu not observable, its time in blocked, as the plugin answers it there.
NO_RUN_DELAY_REASON = "the kernel gives no run delay of a thread (no /proc/thread-self/schedstat: a test)"
WITHOUT_RUN_DELAY = """
    const reason = %s;
    const fetched = window.fetch;
    window.fetch = async (url, options) => {
      const response = await fetched(url, options);
      if (!String(url).includes('/perf/stats?')) {
        return response;
      }
      const stats = await response.json();
      for (const transport of Object.values(stats.transports || {})) {
        for (const phase of Object.values(transport.phases || {})) {
          const parts = phase.parts;
          if (parts && parts.sampled) {
            parts.blocked.mean += parts.waitingForCpu.mean;
            parts.blocked.share = parts.blocked.mean / parts.mean;
            parts.waitingForCpu = {observable: false, reason: reason};
            parts.blocked.includesWaitingForCpuOf = parts.sampled;
          }
        }
      }
      window.answeredStats = stats;
      return new Response(JSON.stringify(stats), {status: 200, headers: {'Content-Type': 'application/json'}});
    };""" % json.dumps(NO_RUN_DELAY_REASON)


def test_waiting_for_a_cpu_not_observable_is_said(ingested, browser):
    """Where the kernel gives no run delay, waitingForCpu is said not observable, with its reason, and not
    drawn; blocked says it includes the wait for a CPU."""
    script = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WITHOUT_RUN_DELAY})
    try:
        open_page(browser, ingested)
        wait_for_refresh(browser)
        shown = shown_parts(browser)
        stats = browser.execute_script("return window.answeredStats")
        figures = [f for f in shown_figures(browser) if "/parts/" in f["path"]]
        assert figures and not mismatches(figures, {"stats": stats})
        check_parts(shown, stats, ingested.get("/perf/vocabulary").json(), waiting_unobservable=True)
        assert all("waitingForCpu" not in row["parts"] and "blocked (includes waiting for a CPU) " in row["parts"]
                   for row in shown["rows"])
        for transport in ("dicom", "rest"):
            phases = [p for t, p, _ in expected_parts(stats, ingested.get("/perf/vocabulary").json()) if t == transport]
            assert "waitingForCpu is not observable for %s: %s." % (", ".join(phases), NO_RUN_DELAY_REASON) \
                in shown["notes"], shown["notes"]
        assert len(shown["notes"]) == 2
        assert not console_errors(browser)
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})
        leave_page(browser)


def parts_beyond_the_page(driver):
    """The texts of the section of where each phase's time goes that stick out of the page or are clipped."""
    return driver.execute_script("""
        const width = document.documentElement.clientWidth;
        const texts = '#parts h2, #parts .note, #parts h3, #parts .bar-row > div, #parts li';
        return Array.from(document.querySelectorAll(texts))
          .filter(e => { const r = e.getBoundingClientRect();
                         return r.left < 0 || r.right > width || e.scrollWidth > e.clientWidth + 1; })
          .map(e => e.textContent);""")


SCREENSHOT_800 = SCREENSHOT.replace(".png", "-800.png")
SCREENSHOT_PARTS = SCREENSHOT.replace(".png", "-parts-800.png")


def test_at_800_px_every_header_and_figure_is_whole(ingested, browser, orthanc_version):
    """A laptop's half screen: every table fits without scrolling sideways, each column header and each
    cell shows all of its text (nothing clipped, no ellipsis), the evidence open. Saved as a screenshot."""
    open_page(browser, ingested)
    browser.set_window_size(800, 1000)
    wait_for_refresh(browser)
    browser.execute_script("document.querySelectorAll('.finding details').forEach(d => d.open = true)")
    report = browser.execute_script("""
        const width = document.documentElement.clientWidth;
        const cut = (e) => e.scrollWidth > e.clientWidth + 1 || getComputedStyle(e).textOverflow === 'ellipsis';
        const cells = Array.from(document.querySelectorAll('table th, table td'));
        return {
          width: width,
          headers: Array.from(document.querySelectorAll('table thead th')).map(e => {
            const r = e.getBoundingClientRect();
            return {text: e.textContent, left: r.left, right: r.right, cut: cut(e)};
          }),
          cutCells: cells.filter(cut).map(e => e.textContent),
          scrolled: Array.from(document.querySelectorAll('.table-scroll'))
            .filter(b => b.scrollWidth > b.clientWidth).map(b => b.firstElementChild.id),
          page: [document.documentElement.scrollWidth, width],
          rows: document.querySelectorAll('#associations-table tbody tr, #slowest-table tbody tr').length,
        };""")
    assert report["width"] <= 800 and len(report["headers"]) == 7 + 9 + 5
    hidden = [h for h in report["headers"] if h["cut"] or h["left"] < 0 or h["right"] > report["width"]]
    assert not hidden, hidden
    assert not report["cutCells"], report["cutCells"]
    assert not report["scrolled"], report["scrolled"]
    assert report["page"][0] <= report["page"][1]
    # The longest AET, and the slowest instances' times, are there whole.
    texts = browser.execute_script(
        "return Array.from(document.querySelectorAll('#associations-table tbody th, #slowest-table td'))"
        ".map(e => e.textContent)")
    assert "MR_SCANNER_ROOM2" in texts
    # Where each phase's time goes: every bar, label and part whole, within the page.
    assert browser.execute_script("return document.querySelectorAll('#parts .bar-row').length") > 5
    assert not parts_beyond_the_page(browser)
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(800, height + 120)
    wait_for_refresh(browser)
    path = SCREENSHOT_800 if orthanc_version == HOST_ORTHANC else SCREENSHOT_800.replace(".png", "-%s.png"
                                                                                          % orthanc_version)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    assert browser.save_screenshot(path)
    parts = SCREENSHOT_PARTS if orthanc_version == HOST_ORTHANC else SCREENSHOT_PARTS.replace(".png", "-%s.png"
                                                                                              % orthanc_version)
    assert browser.find_element("id", "parts").screenshot(parts)
    browser.set_window_size(1280, 1000)
    assert not console_errors(browser)


def test_dates_in_one_format_and_the_window_in_the_address(ingested, browser):
    """Every date the page shows: the browser's locale, 24-hour, its time zone said (the browser runs in
    Brussels, the answers are in UTC); /perf/ui/?window=15m opens on the 15-minute window."""
    open_page(browser, ingested, "/perf/ui/?window=15m")
    assert browser.current_url.endswith("/perf/ui/index.html?window=15m")
    assert browser.execute_script("return document.body.dataset.window") == "15m"
    assert browser.find_element("id", "window").get_attribute("value") == "15m"
    texts = browser.execute_script("""
        return {since: document.getElementById('since').textContent,
                status: document.getElementById('status').textContent,
                zone: Array.from(document.querySelectorAll('.zone')).map(e => e.textContent),
                body: document.body.innerText,
                stored: document.querySelector('#slowest-table td').textContent};""")
    zone = texts["zone"][0]
    assert zone in ("(CET)", "(CEST)", "(GMT+1)", "(GMT+2)"), zone
    assert zone[1:-1] in texts["since"] and zone[1:-1] in texts["status"]
    since = ingested.stats()["since"]  # UTC: the page shows it an hour or two later, in Brussels
    utc_hour = int(since[11:13])
    shown = re.search(r"\b(\d\d):(\d\d):(\d\d)\b", texts["since"])
    assert shown and (int(shown.group(1)) - utc_hour) % 24 in (1, 2), (since, texts["since"])
    assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3}", texts["stored"]), texts["stored"]
    assert not re.search(r"\b(AM|PM)\b", texts["body"]), "a 12-hour clock"
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", texts["body"]), "an ISO date left in UTC"
    assert not console_errors(browser)


def test_a_narrow_window_scrolls_no_sideways_and_a_refresh_moves_nothing(ingested, browser):
    open_page(browser, ingested)
    for width in (400, 1280):
        browser.set_window_size(width, 900)
        wait_for_refresh(browser)
        # The page never scrolls sideways (wide tables scroll inside their own box).
        overflow = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert overflow[0] <= overflow[1], (width, overflow)
        assert not parts_beyond_the_page(browser), width  # where each phase's time goes, whole
        # Chromium's layout-shift entries, over two refreshes that draw the same figures.
        browser.execute_script("""
            window.shifts = [];
            new PerformanceObserver(list => list.getEntries().forEach(e => window.shifts.push(e.value)))
              .observe({type: 'layout-shift'});""")
        wait_for_refresh(browser, wait_for_refresh(browser))
        assert browser.execute_script("return window.shifts") == [], width
    assert not console_errors(browser)


def test_the_trace_button_saves_a_chrome_trace_and_reset_asks_first(ingested, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    open_page(browser, ingested)
    # From the keyboard: Tab reaches the controls in order, each visibly focused, Enter presses.
    order = []
    for _ in range(8):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        focused = browser.execute_script(
            "const e = document.activeElement; return [e.id, e.matches(':focus-visible'), getComputedStyle(e).outlineStyle]")
        order.append(focused[0])
        assert focused[1] and focused[2] != "none", focused
        if focused[0] == "trace":
            break
    assert order[-2:] == ["window", "trace"], order
    before = set(os.listdir(browser.downloads))
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait(browser, "return document.getElementById('trace').dataset.events", what="the trace")
    assert browser.find_element("id", "notice").text.startswith("Saved orthanc-ingest-trace-")
    button = browser.find_element("id", "trace")
    deadline = time.time() + 10
    while not (set(os.listdir(browser.downloads)) - before) or any(
            name.endswith(".crdownload") for name in os.listdir(browser.downloads)):
        assert time.time() < deadline, os.listdir(browser.downloads)
        time.sleep(0.1)
    (saved,) = set(os.listdir(browser.downloads)) - before
    assert saved == button.get_attribute("data-file")
    trace = json.load(open(os.path.join(browser.downloads, saved)))
    assert len(trace["traceEvents"]) == int(button.get_attribute("data-events"))
    slices = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "instance" and e["pid"] == 1]
    assert len(slices) == 60 and all(isinstance(e["ts"], (int, float)) and e["dur"] >= 0 for e in slices)

    # Reset: Tab to it, Enter, and the browser's confirmation. Dismissed, nothing is reset.
    ActionChains(browser).send_keys(Keys.TAB).perform()
    assert browser.switch_to.active_element.get_attribute("id") == "reset"
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    alert = browser.switch_to.alert
    assert "Reset every statistic" in alert.text
    alert.dismiss()
    wait(browser, "return document.getElementById('notice').textContent.startsWith('Reset cancelled')")
    assert stored(ingested.stats(), "all") == 60
    # Accepted, it resets, and the page shows it.
    browser.find_element("id", "reset").click()
    browser.switch_to.alert.accept()
    wait(browser, "return document.body.dataset.resets === '1'", what="the reset")
    assert stored(ingested.stats(), "all") == 0
    wait(browser, "return document.querySelector('#figures-table [data-path=\"transports/all/instances/stored\"]')"
                  ".dataset.value === '0'", what="the figures after the reset")
    assert not console_errors(browser)


def test_orthanc_explorer_opens_the_page(ingested, browser):
    # Orthanc Explorer itself fails on a URL that holds user:password@ (jQuery Mobile's history): the
    # credentials a login prompt would give are sent as a header instead.
    token = base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode()
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Authorization": "Basic " + token}})
    try:
        leave_page(browser)
        browser.get("http://127.0.0.1:%d/app/explorer.html" % ingested.http_port)
        wait(browser, "return document.getElementById('ingest-perf-ui')", what="Orthanc Explorer's link")
        link = browser.find_element("id", "ingest-perf-ui")
        assert link.get_attribute("href") == "http://127.0.0.1:%d/perf/ui/index.html" % ingested.http_port
        link.click()
        wait_for_refresh(browser, 0)
        assert browser.current_url.endswith("/perf/ui/index.html")
        # And back: the page links to Orthanc Explorer.
        back = browser.find_element("id", "explorer")
        assert back.get_attribute("href") == "http://127.0.0.1:%d/app/explorer.html" % ingested.http_port
        back.click()
        wait(browser, "return document.getElementById('ingest-perf-ui')", what="Orthanc Explorer again")
        assert not console_errors(browser)

        # Explorer's Plugins page: the plugin is a link (its RootUri), which opens the page.
        plugin = ingested.get("/plugins/ingest-perf").json()
        assert plugin["RootUri"] == "../perf/ui/index.html"
        assert plugin["Description"].startswith("Times every phase of DICOM ingest")
        browser.get("http://127.0.0.1:%d/app/explorer.html#plugins" % ingested.http_port)
        wait(browser, "return Array.from(document.querySelectorAll('#all-plugins a h1'))"
                      ".some(h => h.textContent === 'ingest-perf')", what="the Plugins page's link")
        tabs = set(browser.window_handles)
        browser.execute_script("Array.from(document.querySelectorAll('#all-plugins a h1'))"
                               ".find(h => h.textContent === 'ingest-perf').parentElement.click()")
        deadline = time.time() + 10
        while set(browser.window_handles) == tabs:
            assert time.time() < deadline, "no tab opened"
            time.sleep(0.1)
        (opened,) = set(browser.window_handles) - tabs
        explorer = browser.current_window_handle
        browser.switch_to.window(opened)
        try:
            wait_for_refresh(browser, 0)
            assert browser.current_url == "http://127.0.0.1:%d/perf/ui/index.html" % ingested.http_port
        finally:
            browser.close()
            browser.switch_to.window(explorer)
        assert not console_errors(browser)
    finally:
        browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})


@pytest.mark.parametrize("section, state, text", [
    ({"Enable": False}, "disabled", "The plugin is disabled: IngestPerf.Enable is false. It measures nothing"),
    ({"MaxThreads": 0}, "inert", "The plugin is inert: invalid configuration: IngestPerf.MaxThreads: expected an "
                                 "integer from 1 to 65536, got 0. It measures nothing and Orthanc runs without it"),
])
def test_a_plugin_that_measures_nothing_says_so_at_the_top(orthanc_factory, browser, series, section, state, text):
    orthanc = orthanc_factory(ingest_perf=section)
    orthanc.http_upload(series[:3])
    open_page(browser, orthanc)
    banner = browser.find_element("id", "plugin-state")
    assert banner.is_displayed() and banner.text.startswith(text), banner.text
    # Above everything else the page shows, the diagnosis first.
    assert banner.location["y"] < browser.find_element("id", "diagnosis").location["y"]
    verdict = browser.find_element("id", "verdict").text
    assert verdict.startswith("The plugin is %s" % state) and "no instance" not in verdict.lower(), verdict
    assert not console_errors(browser)


def test_calling_aets_beyond_the_label_values_are_one_row_on_the_page(orthanc_factory, browser, series):
    orthanc = orthanc_factory(ingest_perf={"MaxLabelValues": 2})
    for i, aet in enumerate(("CT_1", "CT_2", "CT_3", "CT_4", "CT_5")):
        # A new instance each: Orthanc 1.13 answers a duplicate before any hook that names its association.
        orthanc.storescu(series[i:i + 1], calling_aet=aet)
    wait_for(orthanc, lambda s: stored(s, "dicom") == 5)
    open_page(browser, orthanc)
    assert browser.find_element("id", "plugin-state").is_displayed() is False
    names = [row.text for row in browser.find_elements("css selector", "#associations-table tbody th")]
    assert len(names) == len(set(names)) == 3, names
    assert "(other) (3 AETs)" in names, names
    assert not console_errors(browser)
