// The trace viewer page. Vanilla JS, no build step. Every piece of text from a trace goes into
// the page through textContent or an attribute, never as HTML; a text item is shown as Markdown
// by markdown.js (loaded before this script), which builds its elements the same way. http(s) images are loaded by the
// browser only when the person clicks them; data: images are shown at once.
"use strict";

const $ = (selector) => document.querySelector(selector);
const numberFormat = new Intl.NumberFormat("en-US");

// el("div", {className: "x", title: "..."}, child, "text", ...): strings become text nodes.
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node && key !== "role") node[key] = value;
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function formatTokens(n) {
  return n === null || n === undefined ? "unknown" : numberFormat.format(n);
}

function formatMs(ms) {
  if (ms === null || ms === undefined) return "–";
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

function formatTime(unixMs) {
  return new Date(unixMs).toLocaleString();
}

function sum(a, b) {
  return a === null && b === null ? null : (a || 0) + (b || 0);
}

// "1 turn", "2 turns": as `traces list` counts them (console/counts.py).
function turnsCounted(count) {
  return `${count} ${count === 1 ? "turn" : "turns"}`;
}

// A trace's usage, said the same way in the list and on its page (and by `traces list`): the
// tokens of the turns that reported usage, "usage unknown" when none did — never 0.
function usageText(knownTokens, unknownTurns, turns) {
  if (unknownTurns >= turns) return "usage unknown";
  const text = `${numberFormat.format(knownTokens)} tokens`;
  return unknownTurns ? `${text} (+ ${turnsCounted(unknownTurns)} with usage unknown)` : text;
}

// --- the list ----------------------------------------------------------------------------

let listRequest = 0;

async function loadTraces() {
  const params = new URLSearchParams();
  const q = $("#q").value.trim();
  const model = $("#model").value.trim();
  const key = $("#key").value.trim();
  if (q) params.set("q", q);
  if (model) params.set("model", model);
  if (key) params.set("key", key);
  const request = ++listRequest;
  const response = await fetch(`/api/traces?${params}`);
  const data = await response.json();
  if (request !== listRequest) return; // a newer search is on its way
  $("#db").textContent = data.db;
  const list = $("#traces");
  // the key names are shown only when a listed trace was served for a virtual key
  const withKeys = data.traces.some((trace) => trace.key_names.length);
  list.replaceChildren(...data.traces.map((trace) => traceEntry(trace, withKeys)));
  const filtered = q || model || key;
  $("#list-status").textContent = data.traces.length
    ? `${data.traces.length} trace${data.traces.length === 1 ? "" : "s"}${filtered ? " found" : ""}`
    : filtered ? "No trace matches." : "No traces recorded yet.";
  markCurrent();
}

function traceEntry(trace, withKeys) {
  const turns = `${trace.turns} turn${trace.turns === 1 ? "" : "s"}`;
  const button = el(
    "button",
    { type: "button", className: "trace-link", dataset: { traceId: trace.trace_id } },
    el("div", { className: "id mono" }, trace.trace_id),
    el("div", { className: "meta" }, `${turns} · ${trace.models.join(", ")}`),
    el(
      "div",
      { className: "meta" },
      el("span", { className: `badge ${trace.last_status}` }, trace.last_status),
      " ",
      el("span", { className: "usage" },
        usageText(trace.total_tokens || 0, trace.usage_unknown_turns, trace.turns)),
      ` · ${formatTime(trace.updated_at)}`,
    ),
    withKeys && el(
      "div",
      { className: "meta key" },
      trace.key_names.length
        ? ["key ", ...trace.key_names.flatMap((name, i) => [i ? ", " : null, el("span", { className: "mono" }, name)])]
        : "no virtual key",
    ),
  );
  button.addEventListener("click", () => {
    location.hash = `trace=${encodeURIComponent(trace.trace_id)}`;
    showList(false);
  });
  return el("li", {}, button);
}

function currentTraceId() {
  const match = /^#trace=(.*)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

function markCurrent() {
  const id = currentTraceId();
  for (const button of document.querySelectorAll(".trace-link")) {
    button.setAttribute("aria-current", String(button.dataset.traceId === id));
  }
}

// --- one trace ---------------------------------------------------------------------------

let traceRequest = 0;

// `live`: the open trace gained turns; what the person unfolded stays unfolded.
async function loadTrace(id, live = false) {
  const panel = $("#trace");
  if (id === null) {
    panel.replaceChildren(el("p", { className: "muted" }, "Pick a trace from the list."));
    return;
  }
  const request = ++traceRequest;
  const response = await fetch(`/api/trace?id=${encodeURIComponent(id)}`);
  const data = await response.json();
  if (id !== currentTraceId() || request !== traceRequest) return;
  if (!response.ok) {
    panel.replaceChildren(el("p", { className: "reason" }, data.error.message));
    return;
  }
  // The turns already shown come first and in the same order: their <details> keep their state.
  const unfolded = live ? [...panel.querySelectorAll("details")].map((d) => d.open) : [];
  panel.replaceChildren(...renderTrace(data));
  panel.querySelectorAll("details").forEach((details, index) => {
    if (unfolded[index]) details.open = true;
  });
}

function renderTrace(data) {
  const turns = data.turns;
  const calls = new Map(); // tool_call_id -> {name, turn}
  const results = new Map(); // tool_call_id -> {item, turn}
  for (const turn of turns) {
    for (const item of turn.items) {
      if (item.type === "tool_call.done") calls.set(item.tool_call_id, { name: item.name, turn: turn.turn });
    }
    for (const message of turn.messages) {
      for (const item of message.content_items) {
        if (item.type === "tool_result.done") results.set(item.tool_call_id, { item, turn: turn.turn });
      }
    }
  }
  let input = 0;
  let output = 0;
  let unknown = 0;
  const models = [];
  for (const turn of turns) {
    const [i, o] = usageTotals(turn.usage);
    if (i === null && o === null) unknown += 1;
    input += i || 0;
    output += o || 0;
    if (!models.includes(turn.model)) models.push(turn.model);
  }
  const split = unknown < turns.length
    ? ` (${formatTokens(input)} input + ${formatTokens(output)} output)` : "";
  const cost = costText(turns.map((turn) => turn.cost));
  const head = el(
    "div",
    { className: "trace-head" },
    el("h2", { className: "mono" }, data.trace_id),
    el(
      "div",
      { className: "meta" },
      `${turns.length} turn${turns.length === 1 ? "" : "s"} · ${models.join(", ")} · `,
      el("span", { className: "usage" }, usageText(input + output, unknown, turns.length) + split),
      " · ",
      el("span", { className: "cost" }, cost),
      ` · started ${formatTime(turns[0].created_at)}`,
    ),
  );
  return [head, ...turns.map((turn) => renderTurn(turn, calls, results))];
}

// What turns cost (their `cost.total`, exact decimal strings, by currency), said like usage:
// the known total, "+ N turns with cost unknown", or "cost unknown" — never $0 for unknown.
function costText(costs) {
  const totals = new Map();
  let unknown = 0;
  for (const cost of costs) {
    if (!cost || cost.total === null) { unknown += 1; continue; }
    totals.set(cost.currency, (totals.get(cost.currency) || 0) + Number(cost.total));
  }
  if (!totals.size) return "cost unknown";
  const text = [...totals].map(([currency, total]) => formatMoney(total, currency)).join(" + ");
  return unknown ? `${text} (+ ${turnsCounted(unknown)} with cost unknown)` : text;
}

function formatMoney(amount, currency) {
  const digits = amount !== 0 && Math.abs(amount) < 0.01 ? 6 : 4;
  return `${currency === "USD" ? "$" : currency + " "}${amount.toFixed(digits)}`;
}

function usageTotals(usage) {
  if (!usage) return [null, null];
  return [sum(usage.cached_tokens, usage.prompt_tokens), sum(usage.thoughts_tokens, usage.response_tokens)];
}

function renderTurn(turn, calls, results) {
  const finish = turn.finish_reason
    ? `finish: ${turn.finish_reason}${turn.raw_finish_reason && turn.raw_finish_reason !== turn.finish_reason ? ` (${turn.raw_finish_reason})` : ""}`
    : null;
  const model = turn.response_model && turn.response_model !== turn.model
    ? `${turn.model} → ${turn.response_model}` : turn.model;
  const article = el(
    "article",
    { className: "turn", id: `turn-${turn.turn}`, dataset: { turn: turn.turn } },
    el(
      "div",
      { className: "turn-head" },
      el("h3", {}, `Turn ${turn.turn}`),
      el("span", { className: "mono" }, model),
      el("span", { className: `badge ${turn.status}` }, turn.status),
      finish && el("span", { className: "muted" }, finish),
      el("span", { className: "muted" }, `${turn.source} · ${turn.client_type}${turn.key_name ? ` · key ${turn.key_name}` : ""} · ${formatTime(turn.created_at)}`),
    ),
  );
  if (turn.reason) article.append(el("p", { className: "reason" }, turn.reason));
  for (const [part, cut] of Object.entries(turn.truncated || {})) {
    // the store kept only the size, hash and start of a part past its per-turn cap
    article.append(
      el("details", { className: "folded truncated" },
        el("summary", {}, `${part}: stored truncated (${cut.bytes.toLocaleString()} bytes, sha256 ${cut.sha256.slice(0, 12)}…)`),
        el("pre", {}, cut.head)),
    );
  }

  if (turn.config && turn.config.system_prompt) {
    article.append(
      el("details", { className: "folded system-prompt" }, el("summary", {}, "System prompt"),
        el("div", { className: "text" }, turn.config.system_prompt)),
    );
  }
  const request = turn.messages;
  if (request.length) {
    const plural = (n) => `${n} message${n === 1 ? "" : "s"}`;
    const title = turn.context_turn
      ? `Request · ${request.length} new (${plural(turn.history_len)} in all)`
      : `Request · ${plural(request.length)}`;
    article.append(el("div", { className: "section-title" }, title));
    for (const message of request) article.append(renderMessage(message, calls));
  }

  article.append(el("div", { className: "section-title" }, "Response"));
  const response = el("div", { className: "response" });
  for (const item of turn.items) response.append(renderItem(item, { calls, results }));
  if (turn.open_item) response.append(renderItem(turn.open_item, { calls, results, open: true }));
  if (!turn.items.length && !turn.open_item) response.append(el("p", { className: "muted" }, "(nothing)"));
  article.append(response);

  article.append(renderFacts(turn), renderTimeline(turn));
  article.append(
    el("details", { className: "config" }, el("summary", {}, "Config and details"),
      el("pre", {}, JSON.stringify({
        config: turn.config, provider: turn.provider, response_id: turn.response_id,
        timings: turn.timings, diagnostics: turn.diagnostics,
      }, null, 2))),
  );
  return article;
}

function renderMessage(message, calls) {
  const box = el("div", { className: `message ${message.role}` });
  if (message.role === "assistant") {
    // An assistant message in a request is an earlier answer sent back: folded.
    const details = el("details", { className: "folded" },
      el("summary", {}, `Assistant message sent back (${message.content_items.length} item${message.content_items.length === 1 ? "" : "s"})`));
    for (const item of message.content_items) details.append(renderItem(item, { calls, results: new Map() }));
    box.append(details);
    return box;
  }
  box.append(el("div", { className: "role" }, message.role));
  for (const item of message.content_items) box.append(renderItem(item, { calls, results: new Map() }));
  return box;
}

function renderItem(item, context) {
  const kind = item.type.replace(/\.(done|delta)$/, "");
  const open = context.open ? " open-item" : "";
  const unfinished = context.open ? " (unfinished)" : "";
  switch (kind) {
    case "text": {
      const body = el("div", {});
      Markdown.render(body, item.text);
      return el("div", { className: `item text${open}` }, body, unfinished && el("span", { className: "muted" }, unfinished));
    }
    case "thinking":
      return el(
        "details",
        { className: `item thinking${open}` },
        el("summary", {}, `Thinking · ${numberFormat.format(item.thinking.length)} characters${unfinished}`),
        el("div", { className: "text" }, item.thinking),
      );
    case "tool_call": {
      const args = typeof item.arguments === "string" ? item.arguments : JSON.stringify(item.arguments, null, 2);
      const box = el(
        "div",
        { className: `item tool-call${open}`, dataset: { toolCallId: item.tool_call_id } },
        el("div", {}, "Tool call ", el("span", { className: "name mono" }, item.name),
          el("span", { className: "muted mono" }, `  ${item.tool_call_id}${unfinished}`)),
        el("pre", {}, args),
      );
      const result = context.results.get(item.tool_call_id);
      if (result) box.append(renderToolResult(result.item, context.calls, `Result (sent in turn ${result.turn})`));
      return box;
    }
    case "tool_result":
      return renderToolResult(item, context.calls, null);
    case "image_url":
      return el("div", { className: "item image" }, imageNode(item.image_url));
    case "inline_data":
    case "inline_thinking":
      return el("div", { className: `item image${open}` }, inlineNode(item));
    case "embedding":
      return el("div", { className: "item muted" }, `Embedding · ${item.embedding.length} dimensions`);
    default:
      return el("pre", { className: "item" }, JSON.stringify(item, null, 2));
  }
}

function renderToolResult(item, calls, label) {
  const call = calls.get(item.tool_call_id);
  const title = label || `Tool result${call ? ` of ${call.name}` : ""}`;
  const box = el(
    "div",
    { className: "tool-result", dataset: { toolCallId: item.tool_call_id } },
    el("div", { className: "label" }, `${title} · ${item.tool_call_id}`),
    el("div", { className: "text" }, item.text),
  );
  for (const url of item.images || []) box.append(el("div", { className: "image" }, imageNode(url)));
  return box;
}

const DATA_IMAGE = /^data:image\/[a-z0-9.+-]+[;,]/i;
const WEB_URL = /^https?:\/\//i;

function imageNode(url) {
  if (DATA_IMAGE.test(url)) return el("img", { src: url, alt: "image from the trace" });
  if (WEB_URL.test(url)) {
    let host = url;
    try { host = new URL(url).host; } catch (error) { /* shown as given */ }
    const button = el("button", { type: "button", className: "load-image", title: url }, `Show image from ${host}`);
    button.addEventListener("click", () => {
      button.replaceWith(el("img", { src: url, alt: url, referrerPolicy: "no-referrer" }));
    });
    return button;
  }
  return el("span", { className: "muted" }, `(image URL not shown: ${url.slice(0, 80)})`);
}

function inlineNode(item) {
  const mime = /^[a-z]+\/[a-z0-9.+-]+$/i.test(item.mime_type || "") ? item.mime_type : "application/octet-stream";
  const url = `data:${mime};base64,${item.data}`;
  if (mime.startsWith("image/")) return el("img", { src: url, alt: `${item.type} ${mime}` });
  if (mime.startsWith("audio/")) return el("audio", { controls: true, src: url });
  return el("span", { className: "muted" }, `${item.type}: ${mime}, ${numberFormat.format(Math.floor((item.data.length * 3) / 4))} bytes`);
}

function renderFacts(turn) {
  const usage = turn.usage;
  const [input, output] = usageTotals(usage);
  const timings = turn.timings || {};
  const fact = (label, value, title) => el("span", { className: "fact", title }, `${label} `, el("b", {}, value));
  const facts = el("div", { className: "facts usage" });
  if (usage) {
    facts.append(
      fact("Input", formatTokens(input), `cached ${formatTokens(usage.cached_tokens)} + prompt ${formatTokens(usage.prompt_tokens)}`),
      fact("cached", formatTokens(usage.cached_tokens)),
      fact("Output", formatTokens(output), `thoughts ${formatTokens(usage.thoughts_tokens)} + response ${formatTokens(usage.response_tokens)}`),
      fact("thoughts", formatTokens(usage.thoughts_tokens)),
    );
  } else {
    facts.append(fact("Usage", "unknown"));
  }
  const cost = turn.cost;
  facts.append(
    cost && cost.total !== null
      ? fact("Cost", formatMoney(Number(cost.total), cost.currency),
        `${cost.model}: input ${cost.input ?? "?"} + cached ${cost.cached_input ?? "?"} + cache write ${cost.cache_write ?? "?"} + reasoning ${cost.reasoning ?? "?"} + output ${cost.output ?? "?"}`)
      : fact("Cost", "unknown", cost ? "a part of the usage or its price is unknown" : "no catalogue price for this model"),
  );
  facts.append(
    fact("TTFB", formatMs(timings.ttfb_ms), "time to the response headers"),
    fact("first event", formatMs(timings.ttfe_ms)),
    fact("total", formatMs(timings.total_ms)),
  );
  return facts;
}

function renderTimeline(turn) {
  const timings = turn.timings || {};
  const spans = turn.item_timings || [];
  let total = timings.total_ms || 0;
  for (const span of spans) total = Math.max(total, span.end_ms || span.start_ms);
  const box = el("div", { className: "timeline", "aria-label": "Stream timeline" });
  if (!spans.length || total <= 0) return box;
  const percent = (ms) => `${Math.min(100, (100 * ms) / total).toFixed(2)}%`;
  const markers = (track) => {
    for (const [key, className] of [["ttfb_ms", "ttfb"], ["ttfe_ms", "ttfe"]]) {
      if (typeof timings[key] === "number") {
        const marker = el("div", { className: `marker ${className}`, title: `${className}: ${formatMs(timings[key])}` });
        marker.style.left = percent(timings[key]);
        track.append(marker);
      }
    }
  };
  spans.forEach((span, index) => {
    const end = span.end_ms === null ? total : span.end_ms;
    const bar = el("div", {
      className: `bar ${span.type}${span.end_ms === null ? " open" : ""}`,
      title: `${span.type}: ${formatMs(span.start_ms)} → ${span.end_ms === null ? "never finished" : formatMs(span.end_ms)}`,
      dataset: { start: span.start_ms, end: end },
    });
    bar.style.left = percent(span.start_ms);
    bar.style.width = percent(Math.max(0, end - span.start_ms));
    const track = el("div", { className: "track" }, bar);
    if (index === 0) markers(track);
    box.append(el("div", { className: "row" }, el("div", { className: "label" }, span.type.replace("_", " ")), track));
  });
  box.append(el("div", { className: "scale" }, el("span", {}, "0"), el("span", {}, formatMs(total))));
  return box;
}

// --- wiring ------------------------------------------------------------------------------

function debounce(fn, ms) {
  let timer = null;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}

function showError(error) {
  $("#list-status").textContent = `Could not reach the viewer: ${error.message}`;
}

// --- narrow screens: the list folds away once a trace is open ----------------------------

function showList(open) {
  document.body.classList.toggle("list-open", open);
  $("#toggle-list").setAttribute("aria-expanded", String(open));
}

// --- live updates: server-sent events name the traces that gained turns -------------------

function watch() {
  const live = $("#live");
  const updates = new EventSource("/api/updates");
  updates.addEventListener("ready", () => {
    live.textContent = "live";
    live.classList.add("on");
    document.body.dataset.live = "on";
  });
  updates.addEventListener("turns", (event) => {
    const changed = JSON.parse(event.data).traces;
    loadTraces().catch(showError);
    const id = currentTraceId();
    if (id !== null && changed.includes(id)) loadTrace(id, true).catch(showError);
  });
  updates.addEventListener("error", () => {
    // EventSource reconnects by itself and resumes from the last event it saw.
    live.textContent = "reconnecting…";
    live.classList.remove("on");
    document.body.dataset.live = "off";
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const search = debounce(() => loadTraces().catch(showError), 150);
  $("#q").addEventListener("input", search);
  $("#model").addEventListener("input", search);
  $("#key").addEventListener("input", search);
  $("#search").addEventListener("submit", (event) => {
    event.preventDefault();
    loadTraces().catch(showError);
  });
  window.addEventListener("hashchange", () => {
    markCurrent();
    loadTrace(currentTraceId()).catch(showError);
  });
  $("#toggle-list").addEventListener("click", () => {
    showList(!document.body.classList.contains("list-open"));
  });
  showList(currentTraceId() === null);
  loadTraces().catch(showError);
  loadTrace(currentTraceId()).catch(showError);
  watch();
});
