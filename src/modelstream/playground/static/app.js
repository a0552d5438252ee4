// The modelstream playground: a chat page over the server's own API (docs/playground.md).
// POST api/v1/stream starts a turn; a dropped connection resumes with GET api/v1/streams/{id}
// and Last-Event-ID, so the answer goes on from the last event received, none twice, none lost.
// Those api/v1/ routes are the server's /v1/ routes called with the signed-in session's key:
// the page never sees the key (its session cookie is HttpOnly). Text is always put in with
// textContent, never parsed as HTML: an answer's text is shown as Markdown by markdown.js, which
// builds its elements one by one.
"use strict";

const STORE = "modelstream.playground";
const MAX_RECONNECTS = 20;

const $ = (id) => document.getElementById(id);
const state = load();
let running = null; // the turn streaming now: {rid, lastId, controller, view}
let pending = []; // images to send with the next message: data URLs

function load() {
  const blank = { model: "", thinking: "", system: "", history: [], running: null };
  try {
    return { ...blank, ...JSON.parse(sessionStorage.getItem(STORE) || "{}") };
  } catch {
    return blank;
  }
}

function save() {
  sessionStorage.setItem(STORE, JSON.stringify(state));
}

function status(text) {
  $("status").textContent = text;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// --- messages and their views ----------------------------------------------------------------

function userMessage(text, images) {
  const items = images.map((url) => ({ type: "image_url.done", image_url: url }));
  if (text) items.push({ type: "text.done", text });
  return { role: "user", content_items: items };
}

function showUser(message) {
  const turn = element("section", "turn user");
  for (const item of message.content_items) {
    if (item.type === "text.done") turn.append(element("div", "text", item.text));
    if (item.type === "image_url.done") {
      const image = element("img", "thumb");
      image.src = item.image_url;
      image.alt = "attached image";
      turn.append(image);
    }
  }
  $("log").append(turn);
}

// One assistant turn: groups of items as they stream (SPEC §2), the end, the cost.
class AssistantView {
  constructor() {
    this.node = element("section", "turn assistant");
    this.body = element("div", "items");
    this.meta = element("div", "meta");
    this.node.append(this.body, this.meta);
    $("log").append(this.node);
    this.pending = null; // streamed text not drawn yet: {content, text}
    this.frame = 0;
    this.reset();
  }

  reset() {
    this.pending = null;
    this.body.replaceChildren();
    this.meta.replaceChildren();
    this.open = null; // {kind, node, text}
    this.items = []; // the done items: the assistant message sent back next turn
  }

  group(kind) {
    let node;
    if (kind === "thinking" || kind === "inline_thinking") {
      node = element("details", "thinking");
      node.append(element("summary", "", "Thinking"), element("div", "content"));
    } else if (kind === "tool_call") {
      node = element("div", "tool-call");
      node.append(element("div", "name", "tool call"), element("pre", "content"));
    } else if (kind === "text") {
      node = element("div", "answer");
      node.append(element("div", "content markdown"));
    } else {
      node = element("div", "media");
      node.append(element("div", "content"));
    }
    this.body.append(node);
    return { kind, node, text: "" };
  }

  item(item) {
    const [kind, phase] = item.type.split(".");
    if (kind === "embedding") return;
    if (!this.open || this.open.kind !== kind) this.open = this.group(kind);
    const open = this.open;
    const content = open.node.querySelector(".content");
    if (kind === "tool_call" && item.name) {
      open.node.querySelector(".name").textContent = `tool call: ${item.name}`;
    }
    if (phase === "delta") {
      const fragment = item.text ?? item.thinking ?? (kind === "tool_call" ? item.arguments : "");
      if (typeof fragment === "string" && fragment) {
        open.text += fragment;
        if (kind === "text") this.draw(content, open.text);
        else content.textContent = open.text;
      }
      return;
    }
    // .done: the whole item (its growing field joined), kept for the next turn
    if (kind === "text") this.draw(content, item.text, true);
    if (kind === "thinking") content.textContent = item.thinking;
    if (kind === "tool_call") content.textContent = JSON.stringify(item.arguments, null, 2);
    if (kind === "inline_data" || kind === "inline_thinking") this.media(content, item);
    this.items.push(item);
    this.open = null;
  }

  // Answer text as Markdown: while it streams, drawn at most once a frame (the renderer rebuilds
  // only the blocks that changed, so nothing flickers); at its end, or `now`, at once.
  draw(content, text, now = false) {
    if (this.pending && this.pending.content !== content) this.flush();
    this.pending = { content, text };
    if (now) this.flush();
    else if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  flush() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    if (this.pending) Markdown.render(this.pending.content, this.pending.text);
    this.pending = null;
  }

  media(content, item) {
    const url = `data:${item.mime_type};base64,${item.data}`;
    if (item.mime_type.startsWith("image/")) {
      const image = element("img", "generated");
      image.src = url;
      image.alt = "generated image";
      content.replaceChildren(image);
    } else if (item.mime_type.startsWith("audio/")) {
      const audio = element("audio");
      audio.controls = true;
      audio.src = url;
      content.replaceChildren(audio);
    } else {
      content.textContent = `${item.mime_type} data`;
    }
  }

  stop(event) {
    this.flush();
    this.usage = event.usage_metadata;
    this.finish = event.finish_reason;
    this.createdAt = event.created_at;
    const usage = event.usage_metadata || {};
    const tokens = ["prompt_tokens", "cached_tokens", "thoughts_tokens", "response_tokens"]
      .filter((name) => usage[name] != null)
      .map((name) => `${name.replace("_tokens", "")} ${usage[name]}`)
      .join(" · ");
    this.meta.append(element("span", "finish", `finish: ${event.finish_reason}`));
    if (tokens) this.meta.append(element("span", "usage", `tokens: ${tokens}`));
  }

  error(error) {
    this.flush();
    this.failure = error;
    const text = error.reason === "stopped" ? "stopped" : `${error.type}: ${error.message}`;
    this.meta.append(element("span", "error", text));
  }

  cost(text) {
    this.meta.append(element("span", "cost", text));
  }

  // The answer to send back next turn: its done items, and the text of a stopped one so far.
  record() {
    const partial = this.open && this.open.kind === "text" && this.open.text;
    const items = partial ? [...this.items, { type: "text.done", text: partial }] : this.items;
    return {
      role: "assistant",
      content_items: items,
      usage_metadata: this.usage ?? null,
      finish_reason: this.finish ?? null,
    };
  }
}

function showAssistant(entry) {
  const view = new AssistantView();
  for (const item of entry.message.content_items) view.item(item);
  if (entry.message.finish_reason) view.stop(stopEvent(entry.message));
  if (entry.error) view.error(entry.error);
  if (entry.cost) view.cost(entry.cost);
  return view;
}

function stopEvent(message) {
  return { usage_metadata: message.usage_metadata, finish_reason: message.finish_reason };
}

// --- the wire: SSE over fetch (EventSource cannot POST) ------------------------------------

// Splits a byte stream into SSE frames ({id, data}); comments (keep-alives) are dropped.
function frames(onFrame) {
  let buffer = "";
  return (chunk) => {
    buffer += chunk.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id = null;
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("id:")) id = line.slice(3).trimStart();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onFrame(id, data.join("\n"));
    }
  };
}

async function read(response, turn) {
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  let done = false;
  const feed = frames((id, data) => {
    if (data === "[DONE]") {
      done = true;
      return;
    }
    if (id) turn.lastId = id;
    const value = JSON.parse(data);
    if (value.error) turn.view.error(value.error);
    else if (value.event_type === "stop") turn.view.stop(value);
    else for (const item of value.content_items) turn.view.item(item);
  });
  for (;;) {
    const { value, done: ended } = await reader.read(); // throws when the connection drops
    if (ended) break;
    feed(decoder.decode(value, { stream: true }));
    if (done) return true;
  }
  return done;
}

async function follow(turn, first) {
  let response = first;
  for (let attempt = 0; ; attempt += 1) {
    const before = turn.lastId;
    try {
      if (!response) response = await resume(turn);
      if (!response.ok) throw new Refused(await refusal(response));
      if (attempt) status("streaming…");
      if (await read(response, turn)) return;
      throw new Error("the connection closed before the end");
    } catch (error) {
      if (error instanceof Refused) {
        turn.view.error(error.detail); // 404: the stream ended too long ago; 401: signed out
        return;
      }
      if (turn.controller.signal.aborted || attempt >= MAX_RECONNECTS) {
        turn.view.error({ type: "ConnectionError", message: `gave up resuming: ${error}` });
        return;
      }
      if (turn.lastId !== before) attempt = 0; // it got further: a fresh run of tries
      status(`connection lost, resuming after ${turn.lastId || "the start"}…`);
      await new Promise((done) => setTimeout(done, Math.min(2000, 100 * 2 ** attempt)));
      response = null;
    }
  }
}

class Refused extends Error {
  constructor(detail) {
    super(detail.message);
    this.detail = detail;
  }
}

async function refusal(response) {
  const body = await response.json().catch(() => ({}));
  return body.error || { type: "HTTPError", message: `${response.status} ${response.statusText}` };
}

function resume(turn) {
  const extra = turn.lastId ? { "last-event-id": turn.lastId } : {};
  return fetch(`api/v1/streams/${turn.rid}`, {
    headers: extra,
    signal: turn.controller.signal,
  });
}

// --- turns --------------------------------------------------------------------------------

// The conversation to send: every question with its answer, the new question last. An
// exchange whose answer failed before any content is left out, as if never asked.
function messages() {
  const out = [];
  state.history.forEach((entry, index) => {
    const answered = entry.message && entry.message.content_items.length;
    if (answered) out.push(entry.user, entry.message);
    else if (index === state.history.length - 1) out.push(entry.user);
  });
  return out;
}

function config() {
  const out = {};
  if (state.thinking) out.thinking_level = state.thinking;
  if (state.system.trim()) out.system_prompt = state.system;
  return out;
}

async function start() {
  const entry = state.history[state.history.length - 1];
  const body = { model: state.model, messages: messages(), config: config() };
  const view = new AssistantView();
  const turn = { rid: null, lastId: null, view, controller: new AbortController() };
  running = turn;
  busy(true);
  status("streaming…");
  let response;
  try {
    response = await fetch("api/v1/stream", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: turn.controller.signal,
    });
  } catch (error) {
    const stopped = turn.controller.signal.aborted; // Stop before the stream had an id
    view.error(stopped ? { reason: "stopped" } : { type: "NetworkError", message: String(error) });
    return finish(turn, entry);
  }
  if (!response.ok) {
    view.error(await refusal(response));
    return finish(turn, entry);
  }
  turn.rid = response.headers.get("x-response-id");
  state.running = { rid: turn.rid }; // a reload replays this stream from its start
  save();
  await follow(turn, response);
  return finish(turn, entry);
}

async function finish(turn, entry) {
  turn.view.flush();
  entry.message = turn.view.record();
  entry.error = turn.view.failure ?? null;
  if (turn.view.usage) {
    entry.cost = await cost(turn.view);
    turn.view.cost(entry.cost);
  }
  state.running = null;
  running = null;
  save();
  busy(false);
  status(turn.view.failure ? "" : "done");
}

async function cost(view) {
  try {
    const response = await fetch("api/cost", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: state.model, usage: view.usage, at_ms: view.createdAt }),
    });
    const answer = await response.json();
    if (!answer.cost) return "cost: unknown";
    const total = Number(answer.cost.total);
    return `cost: ${total.toFixed(6)} ${answer.cost.currency}`;
  } catch {
    return "cost: unknown";
  }
}

async function stop() {
  const turn = running;
  if (!turn) return;
  $("stop").disabled = true;
  status("stopping…");
  if (!turn.rid) {
    turn.controller.abort(); // not started yet: the request itself is cancelled
    return;
  }
  await fetch(`api/stop/${turn.rid}`, { method: "POST" });
  // the stream now ends with its "stopped" error line, read by follow()
}

function busy(on) {
  $("send").disabled = on;
  $("regenerate").disabled = on;
  $("clear").disabled = on;
  $("stop").disabled = !on;
}

// --- the page -------------------------------------------------------------------------------

async function send(event) {
  event.preventDefault();
  if (running) return;
  const text = $("prompt").value.trim();
  if (!text && !pending.length) return;
  if (!state.model) return status("no model to ask: this server serves none you can use");
  const message = userMessage(text, pending);
  state.history.push({ user: message, message: null });
  save();
  showUser(message);
  $("prompt").value = "";
  pending = [];
  $("attachments").replaceChildren();
  await start();
}

async function regenerate() {
  if (running || !state.history.length) return;
  const last = state.history[state.history.length - 1];
  last.message = null;
  last.error = null;
  last.cost = null;
  const assistants = $("log").querySelectorAll(".turn.assistant");
  if (assistants.length === state.history.length) assistants[assistants.length - 1].remove();
  save();
  await start();
}

function clear() {
  if (running) return;
  state.history = [];
  save();
  $("log").replaceChildren();
  status("");
}

function attach() {
  for (const file of $("attach").files) {
    const reader = new FileReader();
    reader.onload = () => {
      pending.push(reader.result);
      const image = element("img", "thumb");
      image.src = reader.result;
      image.alt = file.name;
      $("attachments").append(image);
    };
    reader.readAsDataURL(file);
  }
  $("attach").value = "";
}

async function models() {
  const response = await fetch("api/v1/models");
  if (!response.ok) {
    status("the sign-in has ended (signed out or expired): reload the page to sign in again");
    return;
  }
  const list = (await response.json()).data;
  for (const model of list) {
    $("model").append(new Option(`${model.id} (${model.owned_by})`, model.id));
  }
  if (!list.some((model) => model.id === state.model)) state.model = list.length ? list[0].id : "";
  $("model").value = state.model;
}

// After a reload mid-answer, the running turn is replayed from its first event.
async function reattach() {
  const saved = state.running;
  const entry = state.history[state.history.length - 1];
  const view = new AssistantView();
  const turn = { rid: saved.rid, lastId: null, view, controller: new AbortController() };
  running = turn;
  busy(true);
  status("resuming…");
  await follow(turn, null);
  await finish(turn, entry);
}

async function main() {
  for (const entry of state.history) {
    showUser(entry.user);
    if (entry.message) showAssistant(entry);
  }
  $("thinking").value = state.thinking;
  $("system").value = state.system;
  if (state.system) $("system-box").open = true;
  $("model").addEventListener("change", () => { state.model = $("model").value; save(); });
  $("thinking").addEventListener("change", () => { state.thinking = $("thinking").value; save(); });
  $("system").addEventListener("input", () => { state.system = $("system").value; save(); });
  $("composer").addEventListener("submit", send);
  $("prompt").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("stop").addEventListener("click", stop);
  $("regenerate").addEventListener("click", regenerate);
  $("clear").addEventListener("click", clear);
  $("attach").addEventListener("change", attach);
  await models();
  save();
  if (state.running && state.history.length) await reattach();
}

main();
