// The page of /perf/ui/: reads /perf/stats, /perf/diagnosis, /perf/slots and /perf/slowest of the
// Orthanc that serves it, every few seconds, and draws them (what there is to draw, once, from
// /perf/vocabulary). Every request goes to the page's own origin and folder (so the browser's
// credentials for Orthanc apply and a reverse proxy's prefix is kept) and nothing else is fetched.
// Every figure shown from an answer carries data-source (which answer), data-path (where in it,
// '/'-separated) and data-value (the value as answered), so that a test compares the page with the
// answers; data-varies="time" marks the figures that move with the clock alone (rates over the
// window's covered seconds), data-scale="100" a share shown in % (0.23 as 23).
"use strict";

(function () {
  // The page is /perf/ui/index.html, the routes one level up. From the page's own location, so that a
  // reverse proxy's prefix is kept, but without the user:password@ a URL may carry (fetch refuses those;
  // the browser sends the credentials it holds for Orthanc anyway).
  const API = new URL("../", location.origin + location.pathname).href;
  const REFRESH_MS = 5000;
  const CHART_HEIGHT = 240;
  const SLOWEST_ROWS = 10;
  const WINDOWS = {
    "1m": { text: "last minute", seconds: 60 },
    "5m": { text: "last 5 minutes", seconds: 300 },
    "15m": { text: "last 15 minutes", seconds: 900 },
    "1h": { text: "last hour", seconds: 3600 },
  };
  // How the page names and colours the transports, in the order it shows them; a transport it does
  // not know is shown after them, by its name.
  const TRANSPORT_TEXT = { dicom: "C-STORE (dicom)", rest: "HTTP (rest)", plugin: "plugins", job: "jobs", all: "all" };
  const TRANSPORT_COLORS = { dicom: "#d9480f", rest: "#1f6feb", plugin: "#8250df", job: "#57606a" };
  // What there is to show, from GET /perf/vocabulary (read once): the page keeps no list of its own.
  // TRANSPORTS: every transport. CYCLE: the parts of one instance's cycle, one after the other (the
  // sender's side before the instance, then the phases serverTotal is the sum of). INSIDE: what is
  // timed inside those parts. PHASES: every phase in the order of an instance's timeline. PARTS: what a
  // phase's time is split into (on a CPU, waiting for one, blocked), each with its definition.
  let TRANSPORTS = [];
  let CYCLE = [];
  let INSIDE = {};
  let PHASES = [];
  let PARTS = [];

  const $ = (id) => document.getElementById(id);
  const state = {
    window: initialWindow(),
    timer: null,
    running: false,
    again: false,
    refreshes: 0,
    plots: {},
    lastUpdate: null,
    openEvidence: new Set(), // the findings whose evidence is open: kept open across refreshes
  };

  function initialWindow() {
    const asked = new URLSearchParams(location.search).get("window");
    return WINDOWS[asked] ? asked : "5m";
  }

  // --- DOM helpers: text only (label values come from modalities), never HTML ----------------------

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null) {
        continue;
      }
      if (key === "class") {
        node.className = value;
      } else if (key === "dataset") {
        Object.assign(node.dataset, value);
      } else if (key === "style") {
        Object.assign(node.style, value);
      } else {
        node.setAttribute(key, value);
      }
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined && child !== false) {
        node.append(child instanceof Node ? child : String(child));
      }
    }
    return node;
  }

  function get(object, path) {
    let value = object;
    for (const part of path.split("/")) {
      if (value === null || value === undefined) {
        return undefined;
      }
      value = value[part];
    }
    return value;
  }

  function formatMs(value) {
    if (typeof value !== "number") {
      return "-";
    }
    const digits = value < 1 ? 3 : value < 100 ? 2 : 1;
    return value.toFixed(digits);
  }

  function formatNumber(value, digits) {
    return typeof value === "number" ? value.toFixed(digits) : "-";
  }

  function pad(number, width) {
    return String(number).padStart(width || 2, "0");
  }

  // One date format everywhere: the browser's locale, a 24-hour clock, the time zone said. A full
  // date where the day matters (since when the plugin counts), a time where it is today's; the
  // columns and axes of times say their zone once, in their header.
  const HOURS = { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" };
  const DATE_TIME = new Intl.DateTimeFormat(undefined,
    Object.assign({ year: "numeric", month: "short", day: "numeric", timeZoneName: "short" }, HOURS));
  const TIME_ZONED = new Intl.DateTimeFormat(undefined, Object.assign({ timeZoneName: "short" }, HOURS));
  const TIME = new Intl.DateTimeFormat(undefined, HOURS);
  const TIME_MS = new Intl.DateTimeFormat(undefined, Object.assign({ fractionalSecondDigits: 3 }, HOURS));
  const MINUTES = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  const ZONE = (TIME_ZONED.formatToParts(new Date()).find((part) => part.type === "timeZoneName") || {}).value || "local";

  // "12:04:05 CET", or with its milliseconds, or without its zone (the column says it).
  function clock(date, milliseconds, zoned = true) {
    return (milliseconds ? TIME_MS : zoned ? TIME_ZONED : TIME).format(date);
  }

  // An ISO 8601 date of an answer ("2026-11-24T09:26:24.123Z") in the page's format, also inside
  // the text of an answer (a verdict that says since when).
  function localDate(text) {
    const date = new Date(text);
    return Number.isNaN(date.getTime()) ? String(text) : DATE_TIME.format(date);
  }

  function localDates(text) {
    return String(text).replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b/g, localDate);
  }

  // A figure of an answer: its text, and where it comes from for whoever checks it.
  function figure(tag, source, answer, path, format, extra) {
    const value = get(answer, path);
    const attributes = Object.assign({}, extra || {});
    attributes.dataset = Object.assign(
      { source: source, path: path, value: JSON.stringify(value === undefined ? null : value) },
      attributes.dataset || {});
    return el(tag, attributes, format(value));
  }

  function phaseColor(phase) {
    return getComputedStyle(document.documentElement).getPropertyValue(`--c-${phase}`).trim() || "#888";
  }

  // The refreshes' state, and under it what the buttons did (kept until the next press).
  function setStatus(text, isError, id) {
    const status = $(id || "status");
    status.textContent = text;
    status.classList.toggle("error", Boolean(isError));
  }

  function setNotice(text, isError) {
    setStatus(text, isError, "notice");
  }

  // --- the vocabulary -----------------------------------------------------------------------------

  function learnVocabulary(vocabulary) {
    const shown = Object.keys(TRANSPORT_TEXT);
    const rank = (name) => (shown.includes(name) ? shown.indexOf(name) : shown.length);
    TRANSPORTS = vocabulary.transports.map((t) => t.name).sort((a, b) => rank(a) - rank(b));
    for (const t of TRANSPORTS) {
      TRANSPORT_TEXT[t] = TRANSPORT_TEXT[t] || t;
    }
    const placed = (place) => vocabulary.phases.filter((phase) => phase.place === place);
    CYCLE = placed("before").concat(vocabulary.phases.filter((phase) => phase.partOfServerTotal)).map((p) => p.name);
    INSIDE = {};
    for (const phase of placed("inside").filter((p) => !p.partOfServerTotal)) {
      (INSIDE[phase.parent] = INSIDE[phase.parent] || []).push(phase.name);
    }
    PHASES = placed("before").concat(vocabulary.phases.filter((p) => p.place === "inside" || p.place === "instance"),
      placed("after")).map((p) => p.name);
    PARTS = vocabulary.phaseParts.map((part) => ({ name: part.name, definition: part.definition }));
  }

  // --- requests -----------------------------------------------------------------------------------

  async function fetchJson(path) {
    const response = await fetch(API + path, { cache: "no-store", headers: { Accept: "application/json" } });
    if (!response.ok) {
      throw new Error(`${path.split("?")[0]} answered HTTP ${response.status}`);
    }
    return response.json();
  }

  async function refresh() {
    if (!PHASES.length) {
      learnVocabulary(await fetchJson("vocabulary"));
    }
    const name = state.window;
    const [stats, diagnosis, series, hour, slowest] = await Promise.all([
      fetchJson(`stats?window=${name}`),
      fetchJson(`diagnosis?window=${name}`),
      fetchJson(`slots?window=${name}`),
      name === "1h" ? null : fetchJson("slots?window=1h"),
      fetchJson(`slowest?window=${name}&n=${SLOWEST_ROWS}`),
    ]);
    if (name !== state.window) {
      return false; // the window changed meanwhile: the next refresh draws it
    }
    renderHeader(stats);
    renderDiagnosis(diagnosis);
    renderFigures(stats);
    renderBreakdown(stats);
    renderParts(stats);
    renderThroughput(hour || series);
    renderLatency(series, stats);
    renderAssociations(stats);
    renderSlowest(slowest);
    renderPlugin(stats);
    return true;
  }

  async function loop() {
    clearTimeout(state.timer);
    if (state.running) {
      state.again = true;
      return;
    }
    state.running = true;
    try {
      do {
        state.again = false;
        if (await refresh()) {
          state.refreshes += 1;
          state.lastUpdate = new Date();
          document.body.dataset.refreshes = String(state.refreshes);
          document.body.dataset.window = state.window;
          setStatus(`Updated ${clock(state.lastUpdate)}, every ${REFRESH_MS / 1000} s.`);
        }
      } while (state.again);
    } catch (error) {
      const last = state.lastUpdate ? `; the figures shown are those of ${clock(state.lastUpdate)}` : "";
      setStatus(`Refresh failed at ${clock(new Date())}: ${error.message}${last}.`, true);
    } finally {
      state.running = false;
      if (!document.hidden) {
        state.timer = setTimeout(loop, REFRESH_MS);
      }
    }
  }

  // --- header, figures, options -------------------------------------------------------------------

  function renderHeader(stats) {
    for (const id of ["orthanc-version", "plugin-version"]) {
      const node = $(id);
      node.textContent = get(stats, node.dataset.path);
      node.dataset.value = JSON.stringify(get(stats, node.dataset.path));
    }
    // A disabled or inert plugin measures nothing: said first, above every (empty) figure.
    const running = stats.state === "running";
    $("enabled-state").replaceChildren(running ? "" : el("span", { class: "badge off" }, stats.state));
    const banner = $("plugin-state");
    banner.hidden = running;
    banner.replaceChildren(...(running ? [] : [
      el("strong", {}, stats.state === "disabled" ? "The plugin is disabled: " : "The plugin is inert: "),
      figure("span", "stats", stats, "reason", String),
      stats.state === "disabled" ? ". It measures nothing, whatever Orthanc stores."
        : ". It measures nothing and Orthanc runs without it; fix the cause and restart Orthanc."]));
    for (const node of document.querySelectorAll(".window-name")) {
      node.textContent = WINDOWS[state.window].text;
    }
    const since = $("since");
    since.textContent = localDate(stats.since);
    since.dataset.value = JSON.stringify(stats.since);
  }

  function renderFigures(stats) {
    const rows = [];
    for (const transport of TRANSPORTS.concat(["all"])) {
      const base = `transports/${transport}`;
      const gap = transport === "dicom" || transport === "all" ? `${base}/phases/associationGap/p50` : null;
      rows.push(el("tr", { dataset: { transport: transport } },
        el("th", { scope: "row" }, TRANSPORT_TEXT[transport]),
        figure("td", "stats", stats, `${base}/instances/stored`, (v) => (v === undefined ? "-" : String(v))),
        figure("td", "stats", stats, `${base}/throughput/instancesPerSecond`, (v) => formatNumber(v, 2),
          { dataset: { varies: "time" } }),
        figure("td", "stats", stats, `${base}/throughput/megabytesPerSecond`, (v) => formatNumber(v, 2),
          { dataset: { varies: "time" } }),
        figure("td", "stats", stats, `${base}/phases/serverTotal/p50`, formatMs),
        figure("td", "stats", stats, `${base}/phases/serverTotal/p99`, formatMs),
        gap ? figure("td", "stats", stats, gap, formatMs) : el("td", { title: "C-STORE only" }, "-")));
    }
    $("figures-table").tBodies[0].replaceChildren(...rows);
    const covered = stats.window;
    $("coverage").replaceChildren(...(covered ? ["The window covers ",
      figure("span", "stats", stats, "window/seconds", (v) => formatNumber(v, 1), { dataset: { varies: "time" } }),
      ` s: ${covered.fullSlots} slots of ${covered.slotSeconds} s and the current one, no further back than the ` +
      "plugin's start or last reset."] : []));
  }

  // The switches (on/off, or a mode) first: which opt-ins are on; then the sizes of the fixed tables.
  // A hook decided once Orthanc has started shows what was decided beside what was asked (held, left
  // to another plugin, waiting, refused): "on" only while the plugin holds it.
  const DECIDED_HOOKS = { ReceivedInstanceCallback: "receivedInstance" };
  function renderPlugin(stats) {
    const entries = Object.entries(stats.configuration || {});
    const option = ([key, value]) => {
      const hook = DECIDED_HOOKS[key] && get(stats, `hooks/${DECIDED_HOOKS[key]}`);
      const on = hook ? hook.registered === true
        : value === true || (typeof value === "string" && value !== "Off");
      const text = typeof value === "boolean" ? (value ? "on" : "off") : String(value);
      return el("li", { class: on ? "on" : "", title: hook && hook.reason ? hook.reason : "" }, `${key}: `,
        figure("strong", "stats", stats, `configuration/${key}`, () => text),
        ...(hook && hook.state ? [" (", figure("span", "stats", stats, `hooks/${DECIDED_HOOKS[key]}/state`, String),
          ")"] : []));
    };
    $("options").replaceChildren(...entries.filter(([, value]) => typeof value !== "number").map(option));
    $("sizes").replaceChildren(...entries.filter(([, value]) => typeof value === "number").map(option));
    $("not-in-effect").replaceChildren(...(stats.notInEffect || []).map((item) =>
      el("li", {}, `${item.option} is not in effect: ${item.reason}`)));
    // Its own CPU time since the reset: callbacks and its thread per stored instance; idle apart.
    // Its thread ticks for a few seconds after ingest: the figures may move between two reads.
    const cost = stats.pluginCost;
    const number = (value) => formatNumber(value, 1);
    const part = (tag, path) => figure(tag, "stats", stats, `pluginCost/${path}`, number, { dataset: { varies: "time" } });
    $("plugin-cost").replaceChildren(...(!cost ? [] : [
      "Its own CPU time: ", part("strong", "microsecondsPerStoredInstance"),
      " µs per stored instance (callbacks ", part("span", "callbacksMicrosecondsPerStoredInstance"),
      " µs, its thread ", part("span", "threadsMicrosecondsPerStoredInstance"),
      " µs); while Orthanc was idle, ", part("span", "idleCpuMs"), " ms in all."]));
  }

  // --- diagnosis ----------------------------------------------------------------------------------

  function renderDiagnosis(diagnosis) {
    // The verdict is the costliest finding's: with findings, each card says its own.
    const count = (diagnosis.findings || []).length;
    $("verdict").replaceChildren(count === 0 ? figure("span", "diagnosis", diagnosis, "verdict", localDates)
      : `${count} finding${count > 1 ? "s" : ""} in the ${WINDOWS[state.window].text}, the costliest first:`);
    const items = (diagnosis.findings || []).map((finding, i) => {
      const base = `findings/${i}`;
      const fix = finding.fix || {};
      const configuration = Object.entries(fix.configuration || {});
      const share = typeof finding.shareOfCycle === "number" ? `, ${Math.round(finding.shareOfCycle * 100)}% of the cycle` : "";
      return el("li", { class: `finding confidence-${finding.confidence}`, dataset: { findingId: finding.id } },
        el("h3", {}, el("span", { class: "badge" }, finding.transport), " ",
          figure("span", "diagnosis", diagnosis, `${base}/verdict`, String)),
        el("p", { class: "cost" },
          finding.costMsPerInstance === null ? "Cost not measurable from inside Orthanc"
            : ["Costs ", figure("span", "diagnosis", diagnosis, `${base}/costMsPerInstance`, formatMs),
              " ms per instance (mean)", share],
          ` (${finding.cost}).`),
        (configuration.length || fix.action) ? el("p", { class: "fix" }, el("strong", {}, "Fix: "),
          configuration.map(([key, value]) => el("code", {}, `${key} = ${JSON.stringify(value)}`)),
          configuration.length ? "; " : "", fix.action || "",
          fix.effect ? [el("br"), el("strong", {}, "Effect: "), fix.effect] : "") : null,
        el("p", {}, el("strong", {}, "Confidence: "), `${finding.confidence}. ${finding.confidenceReason || ""}`),
        el("details", { open: state.openEvidence.has(finding.id) ? "" : undefined, dataset: { findingId: finding.id } },
          el("summary", {}, "Why, and the evidence"),
          el("p", {}, finding.explanation || ""),
          evidenceList(diagnosis, `${base}/evidence`)));
    });
    $("findings").replaceChildren(...items);
  }

  // A finding's evidence, each figure labelled by its name in the answer (docs/diagnosis.md); a
  // name ending in Ms is a duration in milliseconds, said after the figure. A summary of a phase
  // ({count, meanMs, p50Ms...}) is one line; a list (the senders) one line per item.
  function evidenceValue(answer, path, key) {
    const value = get(answer, path);
    const unit = /Ms$/.test(key) ? " ms" : "";
    if (typeof value === "number") {
      const format = unit ? formatMs : (v) => (Number.isInteger(v) ? String(v) : String(Number(v.toFixed(3))));
      return [figure("span", "diagnosis", answer, path, format, { class: "figure" }), unit];
    }
    if (typeof value === "boolean") {
      return figure("span", "diagnosis", answer, path, (v) => (v ? "yes" : "no"), { class: "figure" });
    }
    if (Array.isArray(value)) {
      return el("ul", { class: "evidence-items" }, value.map((item, i) => el("li", {},
        item !== null && typeof item === "object" ? evidenceParts(answer, `${path}/${i}`)
          : evidenceValue(answer, `${path}/${i}`, key))));
    }
    if (value !== null && typeof value === "object") {
      return evidenceParts(answer, path);
    }
    return figure("span", "diagnosis", answer, path, (v) => (v === null ? "-" : localDates(v)), { class: "figure" });
  }

  function evidenceParts(answer, path) {
    const parts = Object.keys(get(answer, path)).map((key) =>
      el("span", { class: "part" }, `${key.replace(/Ms$/, "")} `, evidenceValue(answer, `${path}/${key}`, key)));
    return parts.flatMap((part, i) => (i ? [" \u00b7 ", part] : [part]));
  }

  function evidenceList(answer, path) {
    const evidence = get(answer, path) || {};
    return el("dl", { class: "evidence" }, Object.keys(evidence).flatMap((key) => [
      el("dt", {}, key.replace(/Ms$/, "")),
      el("dd", {}, evidenceValue(answer, `${path}/${key}`, key))]));
  }

  // --- where the time goes ------------------------------------------------------------------------

  function cycleOf(stats, transport) {
    const phases = get(stats, `transports/${transport}/phases`) || {};
    return CYCLE.filter((phase) => phases[phase] && phases[phase].count > 0)
      .map((phase) => ({ phase: phase, mean: phases[phase].mean }));
  }

  function renderBreakdown(stats) {
    const transports = TRANSPORTS.filter((t) => get(stats, `transports/${t}/instances/stored`) > 0);
    const cycles = transports.map((transport) => cycleOf(stats, transport));
    const scale = Math.max(...cycles.map((c) => c.reduce((sum, part) => sum + part.mean, 0)), 0);
    const container = $("breakdown-bars");
    let segments = 0;
    const rows = transports.map((transport, i) => {
      const cycle = cycles[i];
      const total = cycle.reduce((sum, part) => sum + part.mean, 0);
      const phases = get(stats, `transports/${transport}/phases`);
      const parts = cycle.map((part) => `${part.phase} ${formatMs(part.mean)} ms (${Math.round(100 * part.mean / total)}%)`);
      for (const [outer, inner] of Object.entries(INSIDE)) {
        const timed = inner.filter((phase) => phases[phase] && phases[phase].count > 0);
        if (timed.length) {
          parts.push(`inside ${outer}: ` + timed.map((phase) => `${phase} ${formatMs(phases[phase].mean)} ms`).join(", "));
        }
      }
      segments += cycle.length;
      return el("div", { class: "bar-row", dataset: { transport: transport } },
        el("div", { class: "bar-label" }, el("strong", {}, TRANSPORT_TEXT[transport]),
          `: ${formatMs(total)} ms per instance`),
        el("div", { class: "bar", role: "img", "aria-label": `${TRANSPORT_TEXT[transport]}: ${parts.join("; ")}`,
          style: { width: `${Math.max(1, 100 * total / scale)}%` } },
        cycle.map((part) => figure("span", "stats", stats, `transports/${transport}/phases/${part.phase}/mean`, () => "", {
          class: `segment p-${part.phase}`, title: `${part.phase}: ${formatMs(part.mean)} ms`,
          style: { width: `${100 * part.mean / total}%` } }))),
        el("div", { class: "parts" }, parts.join(" \u00b7 ")));
    });
    container.replaceChildren(...(rows.length ? rows
      : [el("p", { class: "note" }, `No instance stored in the ${WINDOWS[state.window].text}.`)]));
    container.dataset.points = String(segments);
    const shown = new Set(cycles.flat().map((part) => part.phase));
    $("breakdown-legend").replaceChildren(...CYCLE.filter((phase) => shown.has(phase)).map((phase) =>
      el("li", {}, el("span", { class: `swatch p-${phase}` }), phase)));
  }

  // --- where each phase's time goes ----------------------------------------------------------------

  // A share of an answer (0.23) as the page says it (23): its figure carries data-scale="100".
  function formatShare(value) {
    return typeof value === "number" ? String(Math.round(100 * value)) : "-";
  }

  // A part's name as the page says it: blocked also holds the wait for a CPU of the instances whose run
  // delay the kernel did not give (all of them when waitingForCpu is not observable).
  function partName(parts, name) {
    const of = parts[name].includesWaitingForCpuOf;
    return !of ? name : of === parts.sampled ? `${name} (includes waiting for a CPU)`
      : `${name} (includes waiting for a CPU for ${of} of the ${parts.sampled} instances)`;
  }

  // Per transport, a bar per phase that has split instances: the phase's mean over them, whole, and a
  // segment per part the answer has; a part it cannot observe is said with its reason, not drawn.
  function renderParts(stats) {
    const container = $("parts-bars");
    const sampling = get(stats, "configuration/PhasePartsSampling");
    let segments = 0;
    const groups = [];
    for (const transport of TRANSPORTS) {
      const phases = get(stats, `transports/${transport}/phases`) || {};
      const split = PHASES.filter((phase) => phases[phase] && phases[phase].parts && phases[phase].parts.sampled > 0);
      if (!split.length) {
        continue;
      }
      const most = split.reduce((a, b) => (phases[b].parts.sampled > phases[a].parts.sampled ? b : a));
      const unobservable = {}; // part -> reason -> the phases it is said of
      const rows = split.map((phase) => {
        const base = `transports/${transport}/phases/${phase}/parts`;
        const parts = phases[phase].parts;
        const drawn = PARTS.filter((part) => parts[part.name] && parts[part.name].observable !== false);
        const hidden = PARTS.filter((part) => parts[part.name] && parts[part.name].observable === false);
        for (const part of hidden) {
          const reasons = unobservable[part.name] = unobservable[part.name] || {};
          (reasons[parts[part.name].reason] = reasons[parts[part.name].reason] || []).push(phase);
        }
        const total = drawn.reduce((sum, part) => sum + parts[part.name].mean, 0);
        const said = (part) => `${partName(parts, part.name)} ${formatMs(parts[part.name].mean)} ms`;
        const described = drawn.map((part) => `${said(part)} (${formatShare(parts[part.name].share)}%)`)
          .concat(hidden.map((part) => `${part.name} not observable`)).join(", ");
        segments += drawn.length;
        return el("div", { class: "bar-row", dataset: { transport: transport, phase: phase } },
          el("div", { class: "bar-label" }, el("strong", {}, phase), ": ",
            figure("span", "stats", stats, `${base}/mean`, formatMs), " ms",
            parts.sampled !== phases[most].parts.sampled
              ? [" over ", figure("span", "stats", stats, `${base}/sampled`, String), " split instances"] : ""),
          el("div", { class: "bar", role: "img", "aria-label": `${TRANSPORT_TEXT[transport]}, ${phase}: ${described}` },
            drawn.map((part) => figure("span", "stats", stats, `${base}/${part.name}/mean`, () => "", {
              class: `segment p-${part.name}`, title: said(part),
              style: { width: `${total > 0 ? 100 * parts[part.name].mean / total : 0}%` } }))),
          el("div", { class: "parts" }, drawn.flatMap((part, i) => [i ? " \u00b7 " : "",
            el("span", { class: "part" }, `${partName(parts, part.name)} `,
              figure("span", "stats", stats, `${base}/${part.name}/mean`, formatMs), " ms (",
              figure("span", "stats", stats, `${base}/${part.name}/share`, formatShare, { dataset: { scale: "100" } }),
              "%)")])));
      });
      groups.push(el("div", { class: "parts-group", dataset: { transport: transport } },
        el("h3", {}, TRANSPORT_TEXT[transport], ": over ",
          figure("span", "stats", stats, `transports/${transport}/phases/${most}/parts/sampled`, String),
          " split instances (", get(stats, "configuration/PhasePartsSampling") === 1 ? "every instance"
            : ["each thread's first, then one in ",
              figure("span", "stats", stats, "configuration/PhasePartsSampling", String)], ", ",
          el("code", {}, "PhasePartsSampling"), ")"),
        rows,
        Object.entries(unobservable).flatMap(([part, reasons]) => Object.entries(reasons).map(([reason, where]) =>
          el("p", { class: "note unobservable", dataset: { part: part } },
            `${part} is not observable for ${where.join(", ")}: ${reason}.`)))));
    }
    container.replaceChildren(...(groups.length ? groups : [el("p", { class: "note" }, sampling === 0
      ? "No instance is split into parts: PhasePartsSampling is 0."
      : `No instance split into parts in the ${WINDOWS[state.window].text}.`)]));
    container.dataset.points = String(segments);
    $("parts-legend").replaceChildren(...PARTS.map((part) => el("li", {},
      el("span", { class: `swatch p-${part.name}` }), el("strong", {}, part.name), `: ${part.definition}`)));
  }

  // --- charts (uPlot) -----------------------------------------------------------------------------

  // Each slot at its middle, and the axis from the first slot's start to the last one's end: the slot
  // of now is not drawn on the chart's edge.
  function slotTimes(slots, slotSeconds) {
    return slots.map((slot) => Date.parse(slot.start) / 1000 + slotSeconds / 2);
  }

  function timeLabels(u, splits) {
    const range = u.scales.x.max - u.scales.x.min;
    return splits.map((seconds) => {
      const date = new Date(seconds * 1000);
      return range > 1200 ? MINUTES.format(date) : TIME.format(date); // HH:MM beyond 20 minutes, else HH:MM:SS
    });
  }

  function plotOptions(container, series, yLabel, logarithmic, slotSeconds) {
    const ink = "#57606a";
    const grid = { stroke: "#eaeef2", width: 1 };
    const font = "11px system-ui, sans-serif";
    const labelFont = "12px system-ui, sans-serif";
    return {
      width: Math.max(200, container.clientWidth),
      height: CHART_HEIGHT,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: true, range: (u, min, max) => [min - slotSeconds / 2, max + slotSeconds / 2] },
        y: logarithmic ? { distr: 3 } : { range: (u, min, max) => [0, Math.max(1, max * 1.15)] },
      },
      axes: [
        { label: `time (${ZONE})`, labelSize: 18, size: 30, space: 70, stroke: ink, grid: grid, font: font,
          labelFont: labelFont, values: timeLabels },
        { label: yLabel, labelSize: 18, size: 52, stroke: ink, grid: grid, font: font, labelFont: labelFont,
          // a logarithmic scale: a line per power of ten, not per digit
          filter: logarithmic ? (u, splits) => splits.map((v) => (Math.abs(Math.log10(v) % 1) < 1e-9 ? v : null)) : undefined },
      ],
      series: [{}].concat(series),
    };
  }

  // One plot per chart, made again only when its series change (same size: nothing moves).
  function drawPlot(name, container, key, makeOptions, data) {
    let plot = state.plots[name];
    if (!plot || plot.key !== key) {
      if (plot) {
        plot.uplot.destroy();
      }
      container.replaceChildren();
      plot = state.plots[name] = { key: key, uplot: new uPlot(makeOptions(), data, container) };
    } else {
      plot.uplot.setData(data);
    }
  }

  function clearPlot(name, container, text) {
    if (state.plots[name]) {
      state.plots[name].uplot.destroy();
      delete state.plots[name];
    }
    container.replaceChildren(el("p", { class: "note" }, text));
  }

  function countValues(data) {
    return data.slice(1).reduce((n, values) => n + values.filter((v) => v !== null).length, 0);
  }

  function renderThroughput(hour) {
    const container = $("throughput-chart");
    const transports = TRANSPORTS.filter((t) => hour.transports[t]);
    const slots = hour.transports[transports[0]] || [];
    const data = [slotTimes(slots, hour.slotSeconds)].concat(transports.map((t) =>
      hour.transports[t].map((slot) => (slot.seconds > 0 ? slot.stored / slot.seconds : null))));
    drawPlot("throughput", container, transports.join(), () => plotOptions(container,
      transports.map((t) => ({ label: t, stroke: TRANSPORT_COLORS[t], width: 2,
        points: { size: 6, fill: TRANSPORT_COLORS[t] } })),
      "instances / s", false, hour.slotSeconds), data);
    const stored = {};
    for (const t of transports) {
      stored[t] = hour.transports[t].reduce((sum, slot) => sum + slot.stored, 0);
    }
    container.dataset.points = String(countValues(data));
    container.dataset.stored = JSON.stringify(stored);
    container.setAttribute("aria-label", "Instances stored per second over the last hour: " +
      transports.map((t) => `${TRANSPORT_TEXT[t]} ${stored[t]} stored`).join(", "));
    container.dataset.window = hour.window;
    $("throughput-legend").replaceChildren(...transports.map((t) => el("li", {},
      el("span", { class: "swatch", style: { background: TRANSPORT_COLORS[t] } }),
      `${TRANSPORT_TEXT[t]}: ${stored[t]} stored`)));
  }

  function renderLatency(series, stats) {
    const select = $("latency-transport");
    const available = ["all"].concat(TRANSPORTS.filter((t) => get(stats, `transports/${t}/instances/stored`) > 0));
    if (Array.from(select.options).map((o) => o.value).join() !== available.join()) {
      const chosen = available.includes(select.value) ? select.value : "all";
      select.replaceChildren(...available.map((t) => el("option", { value: t }, TRANSPORT_TEXT[t])));
      select.value = chosen;
    }
    const transport = select.value;
    const container = $("latency-chart");
    const slots = series.transports[transport] || [];
    const phases = PHASES.filter((phase) => slots.some((slot) => slot.phases[phase]));
    const counts = {};
    for (const phase of phases) {
      counts[phase] = slots.reduce((n, slot) => n + (slot.phases[phase] ? slot.phases[phase].count : 0), 0);
    }
    container.dataset.transport = transport;
    container.dataset.counts = JSON.stringify(counts);
    container.dataset.window = series.window;
    if (!phases.length) {
      clearPlot("latency", container, `No instance stored in the ${WINDOWS[state.window].text}.`);
      container.dataset.points = "0";
      $("latency-legend").replaceChildren();
      return;
    }
    const positive = (v) => (typeof v === "number" && v > 0 ? v : null); // a logarithmic scale
    const data = [slotTimes(slots, series.slotSeconds)];
    const lines = [];
    for (const phase of phases) {
      for (const quantile of ["p50", "p99"]) {
        data.push(slots.map((slot) => (slot.phases[phase] ? positive(slot.phases[phase][quantile]) : null)));
        lines.push({ label: `${phase} ${quantile}`, stroke: phaseColor(phase), width: quantile === "p50" ? 2 : 1.5,
          dash: quantile === "p99" ? [6, 4] : undefined, points: { size: 6, fill: phaseColor(phase) } });
      }
    }
    drawPlot("latency", container, `${transport}:${phases.join()}:${series.slotSeconds}`,
      () => plotOptions(container, lines, "milliseconds (log scale)", true, series.slotSeconds), data);
    container.dataset.points = String(countValues(data));
    container.setAttribute("aria-label", `p50 and p99 per phase over the ${WINDOWS[state.window].text}, ` +
      `${TRANSPORT_TEXT[transport]}: ` + phases.map((phase) => `${phase} (${counts[phase]} samples)`).join(", "));
    $("latency-legend").replaceChildren(...phases.map((phase) => el("li", {},
      el("span", { class: "swatch", style: { background: phaseColor(phase) } }), phase)),
    el("li", {}, el("span", { class: "swatch dashed", style: { borderColor: "#57606a" } }), "p99"));
  }

  function resizePlots() {
    for (const [name, plot] of Object.entries(state.plots)) {
      const container = $(`${name}-chart`);
      plot.uplot.setSize({ width: Math.max(200, container.clientWidth), height: CHART_HEIGHT });
    }
  }

  // --- associations -------------------------------------------------------------------------------

  function renderAssociations(stats) {
    const associations = stats.associations || {};
    const peers = associations.byRemoteAet || [];
    const rows = peers.map((peer, i) => {
      const base = `associations/byRemoteAet/${i}`;
      return el("tr", {},
        // The one "(other)" row holds every calling AET beyond MaxLabelValues: say how many.
        el("th", { scope: "row" }, figure("span", "stats", stats, `${base}/remoteAet`, String),
          peer.distinctAets > 1 ? [" (", figure("span", "stats", stats, `${base}/distinctAets`, String), " AETs)"] : ""),
        figure("td", "stats", stats, `${base}/inProgress`, String),
        figure("td", "stats", stats, `${base}/byConnection`, String),
        figure("td", "stats", stats, `${base}/finished`, String),
        figure("td", "stats", stats, `${base}/instancesPerAssociation/mean`, (v) => formatNumber(v, 1)),
        figure("td", "stats", stats, `${base}/gap/count`, String),
        figure("td", "stats", stats, `${base}/gap/p50`, formatMs),
        figure("td", "stats", stats, `${base}/gap/mean`, formatMs),
        figure("td", "stats", stats, `${base}/gap/p99`, formatMs));
    });
    $("associations-table").tBodies[0].replaceChildren(...(rows.length ? rows
      : [el("tr", { class: "empty" }, el("td", { colspan: "9" }, "No C-STORE instance since the reset."))]));
    const open = associations.openConnections || {};
    $("connections").replaceChildren(...(open.observable === false ? [`Open connections: not observable (${open.reason}).`]
      : ["Open C-STORE connections now: ", figure("strong", "stats", stats, "associations/openConnections/count", String),
        " (Orthanc's own sockets on its DICOM port). An association is one TCP connection (inferred as a chain of instances ",
        "when one address has several open); its gaps are the times between two of its instances."]));
  }

  // --- slowest instances --------------------------------------------------------------------------

  function renderSlowest(slowest) {
    const instances = slowest.instances || [];
    const span = (instance) => CYCLE.reduce((sum, phase) => sum + (instance.phases[phase] || 0), 0);
    const scale = Math.max(...instances.map(span), 0);
    const rows = instances.map((instance, i) => {
      const base = `instances/${i}`;
      const labels = instance.labels || {};
      const from = labels.remoteAet && labels.remoteAet !== "(none)" ? labels.remoteAet : labels.remoteIp;
      const timeline = CYCLE.filter((phase) => typeof instance.phases[phase] === "number").map((phase) =>
        figure("span", "slowest", slowest, `${base}/phases/${phase}`, () => "", {
          class: `segment p-${phase}`, title: `${phase}: ${formatMs(instance.phases[phase])} ms`,
          style: { width: `${100 * instance.phases[phase] / scale}%` } }));
      const described = CYCLE.filter((phase) => typeof instance.phases[phase] === "number")
        .map((phase) => `${phase} ${formatMs(instance.phases[phase])} ms`).join(", ");
      return el("tr", { dataset: { instanceId: instance.instanceId } },
        figure("td", "slowest", slowest, `${base}/arrival`, (v) => clock(new Date(v), true),
          { title: localDate(instance.arrival) }),
        figure("td", "slowest", slowest, `${base}/transport`, String),
        el("td", { title: from }, from || "-"),
        figure("td", "slowest", slowest, `${base}/phases/serverTotal`, formatMs),
        el("td", {}, el("div", { class: "timeline", role: "img", "aria-label": described, title: described }, timeline)));
    });
    while (rows.length < SLOWEST_ROWS) { // the table keeps its height
      rows.push(el("tr", { class: "empty" }, el("td", { colspan: "5" },
        rows.length === 0 ? `No instance stored in the ${WINDOWS[state.window].text}.` : "\u00a0")));
    }
    $("slowest-table").tBodies[0].replaceChildren(...rows);
    $("slowest-table").dataset.points = String(instances.length);
    const ring = slowest.ring || {};
    $("ring").textContent = ring.coversWindow === false
      ? `Only the last ${ring.capacity} instances are kept: they reach back ${ring.reachesBackSeconds} s, less than the window.`
      : `${slowest.matched} instances stored in the window; the ${ring.capacity} most recent are kept.`;
  }

  // --- buttons ------------------------------------------------------------------------------------

  async function downloadTrace() {
    const button = $("trace");
    if (button.getAttribute("aria-busy") === "true") {
      return;
    }
    button.setAttribute("aria-busy", "true");
    const seconds = WINDOWS[state.window].seconds;
    try {
      const response = await fetch(`${API}trace?seconds=${seconds}`, { cache: "no-store" });
      if (!response.ok) {
        throw new Error(`/perf/trace answered HTTP ${response.status}`);
      }
      const text = await response.text();
      const trace = JSON.parse(text);
      if (!Array.isArray(trace.traceEvents)) {
        throw new Error("/perf/trace answered no traceEvents");
      }
      const now = new Date();
      const file = `orthanc-ingest-trace-${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-` +
        `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}.json`;
      const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
      const link = el("a", { href: url, download: file, class: "visually-hidden" }, file);
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      button.dataset.events = String(trace.traceEvents.length);
      button.dataset.file = file;
      setNotice(`Saved ${file}: ${trace.traceEvents.length} events of the ${WINDOWS[state.window].text}; ` +
        "open it in Perfetto or chrome://tracing.");
    } catch (error) {
      setNotice(`Trace not saved: ${error.message}.`, true);
    } finally {
      button.removeAttribute("aria-busy");
    }
  }

  async function resetStatistics() {
    const question = "Reset every statistic of the ingest-perf plugin on this Orthanc?\n\n" +
      "Counts, histograms, time windows and the slowest instances start again from zero, for everyone who reads them.";
    if (!window.confirm(question)) {
      setNotice("Reset cancelled: nothing was changed.");
      return;
    }
    try {
      const response = await fetch(`${API}reset`, { method: "POST", cache: "no-store" });
      if (!response.ok) {
        throw new Error(`/perf/reset answered HTTP ${response.status}`);
      }
      document.body.dataset.resets = String(Number(document.body.dataset.resets || 0) + 1);
      setNotice(`Statistics reset at ${clock(new Date())}.`);
      loop();
    } catch (error) {
      setNotice(`Reset failed: ${error.message}.`, true);
    }
  }

  function chooseWindow(name) {
    state.window = name;
    // Relative: an absolute URL differs from a document URL that holds user:password@ (an exception).
    history.replaceState(null, "", `?window=${name}`);
    loop();
  }

  function start() {
    for (const node of document.querySelectorAll(".zone")) {
      node.textContent = `(${ZONE})`;
    }
    const select = $("window");
    select.value = state.window;
    select.addEventListener("change", () => chooseWindow(select.value));
    $("latency-transport").addEventListener("change", () => loop());
    $("findings").addEventListener("toggle", (event) => {
      const id = event.target.dataset.findingId;
      if (event.target.open) {
        state.openEvidence.add(id);
      } else {
        state.openEvidence.delete(id);
      }
    }, true); // toggle does not bubble
    $("trace").addEventListener("click", downloadTrace);
    $("reset").addEventListener("click", resetStatistics);
    // No requests while nobody looks: a tab left open in the background costs Orthanc nothing.
    document.addEventListener("visibilitychange", () => {
      if (document.hidden) {
        clearTimeout(state.timer);
      } else {
        loop();
      }
    });
    let resizing = null;
    window.addEventListener("resize", () => {
      clearTimeout(resizing);
      resizing = setTimeout(resizePlots, 150);
    });
    loop();
  }

  start();
})();
