// judgeflow review: the page. Every text under judgement is untrusted, so the DOM is built with
// createElement + textContent only (never parsed from an HTML string), and the server's CSP allows no inline script.
"use strict";
(() => {
  const token = new URLSearchParams(location.search).get("token") || "";
  const state = { queue: [], current: null, item: null, facets: null, blind: true, focusClaim: null,
    page: { offset: 0, limit: 100, matched: 0 }, busy: 0, openSeq: 0, panelSeq: 0 };
  const FILTERS = [
    ["judge", "judge label", [["1", "1"], ["0", "0"], ["unscored", "unscored"]]],
    ["human", "your label", [["open", "not labelled"], ["1", "1"], ["0", "0"], ["skipped", "skipped"]]],
    ["disagree", "disagreement", [["yes", "judge ≠ you"], ["no", "judge = you"]]],
    ["criterion", "criterion", null], ["dataset", "dataset", null],
    ["status", "status", null], ["language", "language", null],
  ];
  const $ = (id) => document.getElementById(id);

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "dataset") Object.assign(node.dataset, v);
      else if (k === "on") for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
      else node[k] = v;
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  function showError(msg) {
    const box = $("error");
    box.textContent = msg;
    box.hidden = false;
    setTimeout(() => { box.hidden = true; }, 6000);
  }

  async function api(path, body) {
    const opts = { headers: { "X-Judgeflow-Token": token } };
    if (body !== undefined) {
      opts.method = "POST";
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const r = await fetch(path, opts);
    const data = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
    if (!r.ok) { showError(data.error || `HTTP ${r.status}`); throw new Error(data.error); }
    return data;
  }

  // a save or an item load in flight: the page says so, and label / move keys are ignored until it ends,
  // so a key always acts on the item on screen
  async function busy(what, fn) {
    state.busy += 1;
    document.body.classList.add("busy");
    $("busy").textContent = what;
    try {
      return await fn();
    } finally {
      state.busy -= 1;
      if (!state.busy) { document.body.classList.remove("busy"); $("busy").textContent = ""; }
    }
  }

  // -- queue -------------------------------------------------------------------------------

  function filterValues() {
    const params = new URLSearchParams();
    const q = $("search").value.trim();
    if (q) params.set("q", q);
    for (const [key] of FILTERS) {
      const sel = $(`f-${key}`);
      if (sel && sel.value) params.set(key, sel.value);
    }
    return params;
  }

  function buildFilters(facets) {
    const box = $("filters");
    box.replaceChildren();
    for (const [key, title, fixed] of FILTERS) {
      const options = fixed || (facets[key] || []).map((v) => [v, v]);
      const sel = el("select", { id: `f-${key}`, on: { change: () => loadQueue() } },
        el("option", { value: "" }, "any"), options.map(([v, t]) => el("option", { value: v }, t)));
      box.append(el("label", {}, title, sel));
    }
  }

  function chip(text, cls) { return el("span", { className: `chip ${cls || ""}` }, text); }

  function queueRow(e) {
    const chips = [];
    if (e.human !== null) chips.push(chip(`you ${e.human}`, `h${e.human}`));
    else if (e.skipped) chips.push(chip("skipped"));
    if ("judge" in e) chips.push(chip(`judge ${e.judge === null ? "–" : e.judge}`, `j${e.judge}`));
    if (e.disagree) chips.push(chip("disagree", "dis"));
    if ("other" in e && e.other !== e.judge) chips.push(chip(`B ${e.other === null ? "–" : e.other}`, "dis"));
    return el("li", {
      className: e.index === state.current ? "current" : "", dataset: { index: e.index },
      on: { click: () => { if (!state.busy) openItem(e.index); } },
    }, el("div", {}, el("span", { className: "qid" }, e.id), " ", chips),
    el("div", { className: "muted" }, e.snippet));
  }

  // one page of the queue (the server pages it): 5,000 items never become 5,000 rows
  function renderQueue() {
    $("queue").replaceChildren(...state.queue.map(queueRow));
    const { offset, matched } = state.page;
    const shown = state.queue.length ? `rows ${offset + 1}–${offset + state.queue.length} of ${matched}` : "none";
    $("queue-count").textContent = `${matched} match · ${shown}` + (state.blind ? " · blind: judge filters see labelled items only" : "");
    $("page-prev").disabled = offset === 0;
    $("page-next").disabled = offset + state.queue.length >= matched;
  }

  // replace one row in place after a save (no reload of the queue)
  function updateRow(entry) {
    const k = state.queue.findIndex((e) => e.index === entry.index);
    if (k < 0) return;
    state.queue[k] = entry;
    const li = [...$("queue").children].find((x) => Number(x.dataset.index) === entry.index);
    if (li) li.replaceWith(queueRow(entry));
  }

  async function loadQueue(opts = {}) {
    const params = new URLSearchParams(filterValues());
    if (opts.offset !== undefined) params.set("offset", opts.offset);
    else if (state.current !== null) params.set("around", state.current);
    const data = await api(`/api/queue?${params}`);
    state.blind = data.blind;
    if (!state.facets) { state.facets = data.facets; buildFilters(data.facets); }
    state.queue = data.items;
    state.page = { offset: data.offset, limit: data.limit, matched: data.matched };
    renderQueue();
    return data;
  }

  function turnPage(delta) {
    const offset = Math.max(0, state.page.offset + delta * state.page.limit);
    loadQueue({ offset }).catch(() => {});
  }

  // -- item view ---------------------------------------------------------------------------

  // text with [start, end) spans marked; overlapping spans after the first are dropped
  function marked(text, spans) {
    const out = [];
    let pos = 0;
    for (const s of [...spans].sort((a, b) => a.start - b.start)) {
      if (s.start < pos) continue;
      out.push(text.slice(pos, s.start));
      out.push(el("mark", { className: s.cls || "", title: s.title, dataset: { claim: s.claim } }, text.slice(s.start, s.end)));
      pos = s.end;
    }
    out.push(text.slice(pos));
    return el("div", { className: "text" }, out);
  }

  function claimSpans(item, field, doc) {
    if (!item.judge) return [];
    const spans = [];
    for (const c of item.judge.claims) {
      for (const s of c.spans) {
        if (s.field === field && s.doc === doc) {
          spans.push({ start: s.start, end: s.end, claim: c.id, cls: c.error ? "err" : "", title: `${c.id}: ${c.verdict}` });
        }
      }
    }
    return spans;
  }

  // the claims' spans cut around the answer's citation markers, which keep marks of their own
  function answerSpans(item) {
    if (!item.judge) return [];
    const cites = (item.judge.citations || []).map((m) => ({
      start: m.start, end: m.end, claim: m.claims[0] || "", cls: `cite ${m.status || "unchecked"}`,
      title: `citation ${m.text}: ${m.status || "not checked"}`,
    }));
    const spans = [];
    for (const c of item.judge.claims.filter((c) => c.answer_span)) {
      let at = c.answer_span[0];
      const end = c.answer_span[1];
      const piece = (s, e) => spans.push({ start: s, end: e, claim: c.id, cls: c.error ? "err" : "", title: `${c.id}: ${c.verdict}` });
      for (const m of [...cites].sort((a, b) => a.start - b.start)) {
        if (m.end <= at || m.start >= end) continue;
        if (m.start > at) piece(at, m.start);
        at = Math.max(at, m.end);
      }
      if (at < end) piece(at, end);
    }
    return spans.concat(cites);
  }

  function labelWord(v) { return v === null || v === undefined ? "unscored" : String(v); }

  function outcome(judge, human) {
    if (judge === null || judge === undefined) return ["the judge left it unscored", ""];
    if (human === null) return ["", ""];
    if (judge === human) return ["you agree", "agree"];
    return judge === 1 ? ["a false alarm by the judge (judge 1, you 0)", "false_alarm"]
      : ["a miss by the judge (judge 0, you 1)", "miss"];
  }

  function claimTable(judge) {
    const rows = judge.claims.map((c) => {
      let ev = c.evidence || "";
      const flags = [];
      if (c.evidence_found === false) flags.push(el("div", { className: "flag" }, "quote not found in the evidence"));
      if (c.placed === false) flags.push(el("div", { className: "flag" }, "claim not placed in the answer"));
      else if (c.basis === "evidence") flags.push(el("div", { className: "muted" }, "from the given evidence documents"));
      else if (c.evidence && c.spans.length === 0 && c.basis !== "knowledge") flags.push(el("div", { className: "muted" }, "not located in the shown text"));
      return el("tr", {
        className: `claim ${c.deciding ? "deciding" : ""}`, dataset: { claim: c.id },
        on: { click: () => focusClaim(c.id) },
      }, el("td", {}, c.id, c.deciding ? el("div", { className: "flag" }, "deciding") : null),
      el("td", {}, c.text), el("td", {}, c.verdict ?? "–",
        c.cites ? el("div", { className: `cite ${c.citation || "unchecked"}` }, `cites ${c.cites.join(" ")}: ${c.citation || "–"}`) : null),
      el("td", {}, c.basis ?? "–"),
      el("td", {}, ev, flags), el("td", {}, c.reason));
    });
    return el("table", {}, el("thead", {}, el("tr", {}, ["claim", "text", "verdict", "basis", "evidence", "reason"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows));
  }

  function requirementsTable(reqs) {
    return el("table", {}, el("thead", {}, el("tr", {}, ["req", "requirement", "status", "evidence", "reason"].map((h) => el("th", {}, h)))),
      el("tbody", {}, reqs.map((r) => el("tr", { className: r.status === "not_met" ? "deciding" : "" },
        el("td", {}, r.id), el("td", {}, r.text), el("td", {}, r.status), el("td", {}, r.evidence), el("td", {}, r.reason)))));
  }

  function judgeBlock(item) {
    if (!item.revealed) {
      return el("div", { className: "blind", id: "blind" },
        "Blind review: the judge's label and claim verdicts appear after you label this item.");
    }
    if (!item.judge) return el("div", { className: "blind" }, "This item has no result row.");
    const j = item.judge;
    const [word, cls] = outcome(j.label, item.human);
    const parts = [el("div", { className: `verdict ${cls}`, id: "verdict" },
      el("strong", {}, `judge said ${labelWord(j.label)}`), ` (${j.criterion ?? "no criterion"}, ${j.model ?? ""})`,
      word ? ` → ${word}` : "", el("div", { className: "muted" }, j.reason || j.error || ""))];
    parts.push(el("h3", {}, "claims (the deciding claim first)"), claimTable(j));
    const decided = Object.entries(j.decided_by || {}).filter(([, n]) => n > 0);
    if (decided.length) parts.push(el("div", { className: "muted", id: "decided" },
      "decided by: " + decided.map(([k, n]) => `${k} ${n}`).join(", ")));
    if (j.requirements) parts.push(el("h3", {}, "requirement coverage"), requirementsTable(j.requirements));
    if (item.other) {
      const o = item.other;
      const flip = item.flip;
      parts.push(el("h3", {}, "A/B: the two runs"), el("div", { className: "ab", id: "ab" },
        el("div", {}, el("strong", {}, `A: ${labelWord(j.label)}`), ` ${j.criterion ?? ""} ${j.model ?? ""}`, el("div", { className: "muted" }, j.reason || "")),
        el("div", {}, el("strong", {}, `B: ${labelWord(o.label)}`), ` ${o.criterion ?? ""} ${o.model ?? ""}`, el("div", { className: "muted" }, o.reason || ""))));
      if (flip) {
        parts.push(el("div", { className: "verdict dis", id: "flip" }, `the claim that flipped (run ${flip.run} says 1): `,
          flip.claim ? el("q", {}, flip.claim.text) : "no single claim", flip.claim ? ` — ${flip.claim.verdict}` : ""));
      } else {
        parts.push(el("div", { className: "muted" }, "both runs give the same label"));
      }
    }
    return el("div", {}, parts);
  }

  function focusClaim(id) {
    state.focusClaim = id;
    for (const m of document.querySelectorAll("mark")) m.classList.toggle("focus", m.dataset.claim === id);
    const first = [...document.querySelectorAll("mark")].find((m) => m.dataset.claim === id);
    if (first) first.scrollIntoView({ block: "nearest" });
  }

  function renderItem(item) {
    const box = $("item");
    const head = el("h2", {}, `${item.index + 1} of ${item.total} · `, el("span", { className: "qid", id: "item-id" }, item.id), " ",
      chip(item.dataset), chip(item.criterion), chip(item.language), item.status !== "judged" ? chip(item.status, "dis") : null);
    const parts = [head];
    if (item.question) parts.push(el("h3", {}, "question"), el("div", { className: "text", id: "question" }, item.question));
    if (item.reference) parts.push(el("h3", {}, "reference"), marked(item.reference, claimSpans(item, "reference", 0)));
    item.source.forEach((doc, k) => {
      const label = item.source_labels && item.source_labels[k];  // a conversation: the message's label
      const cited = label && item.judge && item.judge.claims.some((c) => c.cited === label);
      const text = marked(doc, claimSpans(item, "source", k).filter((s) => s.end > s.start));
      if (cited) text.classList.add("cited");
      parts.push(el("h3", { className: cited ? "cited" : "" }, label ? `message: ${label}${cited ? " (cited)" : ""}`
        : item.source.length > 1 ? `source document ${k + 1} of ${item.source.length}` : "source"), text);
    });
    if (item.spec) parts.push(el("h3", {}, "spec"), marked(item.spec, claimSpans(item, "spec", 0)));
    const answer = marked(item.answer, answerSpans(item));
    answer.classList.add("answer");
    answer.id = "answer";
    parts.push(el("h3", {}, "answer"), answer);
    const btn = (key, text, value) => el("button", {
      className: item.human === value ? "on" : "", title: `key ${key}`, on: { click: () => doLabel(value) },
    }, `${text} [${key}]`);
    parts.push(el("div", { className: "labelbar" },
      el("span", { id: "your-label" }, item.human === null ? (item.skipped ? "skipped" : "not labelled") : `your label: ${item.human}`),
      btn("1", "1 error", 1), btn("0", "0 no error", 0), btn("s", "skip", "skip"),
      el("button", { title: "key b", on: { click: back } }, "back [b]"),
      el("button", { id: "next-open", title: "key Enter", on: { click: nextOpen } }, "next open [Enter]"),
      el("input", { id: "note", type: "text", placeholder: "note (optional, saved with the label) [n]", value: item.note || "" })));
    parts.push(judgeBlock(item));
    box.replaceChildren(...parts);
    box.scrollTop = 0;
  }

  // show item `index`; of several loads in flight only the last one renders
  async function openItem(index) {
    const seq = ++state.openSeq;
    const item = await busy("loading…", () => api(`/api/items/${index}`));
    if (seq !== state.openSeq) return;
    state.current = index;
    state.item = item;
    renderItem(item);
    if (!state.queue.some((e) => e.index === index)) await loadQueue();
    for (const li of $("queue").children) li.classList.toggle("current", Number(li.dataset.index) === index);
    const cur = [...$("queue").children].find((li) => Number(li.dataset.index) === index);
    if (cur) cur.scrollIntoView({ block: "nearest" });
  }

  // the item `delta` rows on in the (filtered) queue, or with open=1 the next item neither labelled nor skipped
  async function stepTo(params) {
    const from = state.current === null ? -1 : state.current;
    const q = new URLSearchParams(filterValues());
    q.set("from", from);
    for (const [k, v] of Object.entries(params)) q.set(k, v);
    const res = await busy("loading…", () => api(`/api/step?${q}`));
    return res.index;
  }

  async function step(delta) {
    const index = await stepTo({ delta });
    if (index !== null) await openItem(index);
  }
  function back() { return step(-1); }

  async function nextOpen() {
    const index = await stepTo({ open: 1 });
    if (index !== null) await openItem(index);
    else showError("every item in this queue is labelled or skipped");
  }

  // label the item on screen: its id travels with the save, and the answer re-renders it only if it is still shown
  async function doLabel(value) {
    const shown = state.item;
    if (!shown) return;
    const note = $("note") ? $("note").value : null;
    const res = await busy("saving…", () => api(`/api/items/${shown.index}/label`, { id: shown.id, label: value, note }));
    updateRow(res.entry);
    if (state.item && state.item.index === shown.index && state.item.id === shown.id) {
      state.item = res.item;
      renderItem(res.item); // the reveal stays on screen; Enter moves on
    }
    refreshPanel();
    if (value === "skip") await nextOpen();
  }

  // -- calibration panel -------------------------------------------------------------------

  // the live calibration runs on the server's worker thread, after the save has answered; the newest answer wins
  async function refreshPanel() {
    const seq = ++state.panelSeq;
    $("panel").classList.add("updating");
    try {
      const c = await api("/api/calibration");
      if (seq === state.panelSeq) renderPanel(c);
    } catch (e) { /* shown by api() */ } finally {
      if (seq === state.panelSeq) $("panel").classList.remove("updating");
    }
  }

  function renderPanel(c) {
    const parts = [el("h2", {}, "calibration"),
      el("div", { id: "counts" }, `${c.labelled} labelled · ${c.skipped} skipped · ${c.remaining} open of ${c.total}`),
      el("div", { className: "muted" }, `saved to ${c.labels_path}`)];
    const r = c.report;
    if (!r) {
      parts.push(el("p", { className: "muted", id: "kappa" }, c.message || "label items to see the agreement"));
    } else {
      parts.push(el("div", { id: "kappa" }, el("span", { className: "kappa" }, r.kappa === null ? "kappa –" : `kappa ${r.kappa_value}`),
        r.kappa_ci ? ` 95% CI ${r.kappa_ci_text}` : "", ` · n = ${r.n}`));
      if (r.kappa_ci_note) parts.push(el("div", { className: "muted", id: "ci-note" }, r.kappa_ci_note));
      if (r.kappa_note) parts.push(el("div", { className: "muted" }, r.kappa_note));
      if (r.n < 30) parts.push(el("div", { className: "warn", id: "small" }, `only ${r.n} labelled items: the interval is wide; label at least 30`));
      for (const w of r.warnings.filter((w) => !w.startsWith("only "))) parts.push(el("div", { className: "warn" }, w));
      const m = r.confusion;
      parts.push(el("h3", {}, "confusion (rows: you, columns: judge)"), el("table", { className: "confusion", id: "confusion" },
        el("tr", {}, el("th", {}, ""), el("th", {}, "judge 0"), el("th", {}, "judge 1")),
        el("tr", {}, el("th", {}, "you 0"), el("td", {}, m.tn), el("td", { className: "fp" }, m.fp)),
        el("tr", {}, el("th", {}, "you 1"), el("td", { className: "fn" }, m.fn), el("td", {}, m.tp))));
      parts.push(el("h3", {}, "direction of the disagreements"),
        el("div", { id: "direction" }, `${r.false_alarms} false alarm(s) (judge 1, you 0) · ${r.misses} miss(es) (judge 0, you 1)`),
        r.unscored ? el("div", { className: "muted" }, `${r.unscored} labelled item(s) the judge left unscored (not counted)`) : null,
        el("h3", {}, "diagnosis"), el("p", { id: "diagnosis" }, r.diagnosis));
    }
    if (c.compare) {
      parts.push(el("h3", {}, "A/B"), el("p", { id: "compare" }, c.compare.verdict || c.compare.message));
    }
    const crit = r && r.criteria ? Object.keys(r.criteria)[0] : null;
    parts.push(el("p", { className: "muted", id: "tune-help" }, "improve the criterion from these labels (an edit is kept only if held-out agreement rises): ",
      el("code", {}, `judgeflow tune ITEMS.jsonl --criterion ${crit || "NAME"} --model MODEL --labels ${c.labels_path}`),
      " (docs/tuning.md)"));
    $("panel").replaceChildren(...parts.filter((x) => x));
  }

  // -- keys and start ----------------------------------------------------------------------

  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement) {
      if (ev.key === "Escape" || (ev.key === "Enter" && t.id === "note")) t.blur();
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const actions = { "1": () => doLabel(1), "0": () => doLabel(0), s: () => doLabel("skip"), b: back,
      Enter: nextOpen, j: () => step(1), k: () => step(-1), ArrowDown: () => step(1), ArrowUp: () => step(-1),
      n: () => { if ($("note")) { ev.preventDefault(); $("note").focus(); } } };
    const fn = actions[ev.key];
    if (!fn) return;
    ev.preventDefault();
    if (state.busy && ev.key !== "n") { showError(`${$("busy").textContent} key ${ev.key} ignored: press it again`); return; }
    Promise.resolve(fn()).catch(() => {}); // api() has shown the error; the item stays as it was
  });

  async function start() {
    $("mode").textContent = "";
    let timer = null;
    $("search").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => loadQueue({ offset: 0 }), 200); });
    $("page-prev").addEventListener("click", () => turnPage(-1));
    $("page-next").addEventListener("click", () => turnPage(1));
    const data = await loadQueue();
    $("mode").textContent = data.blind ? "blind: the judge is shown after you label" : "revealed (--reveal)";
    refreshPanel();
    const first = await stepTo({ open: 1 });
    const index = first !== null ? first : (state.queue[0] ? state.queue[0].index : null);
    if (index !== null) await openItem(index);
  }
  start().catch((e) => showError(String(e)));
})();
