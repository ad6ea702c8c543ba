// The JSON API with the key in sessionStorage; errors in plain words.
const KEY = "docray.apiKey";

export function getKey() { return sessionStorage.getItem(KEY) || ""; }
export function setKey(key) {
  if (key) sessionStorage.setItem(KEY, key); else sessionStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(status, body, retryAfter) {
    super(plainWords(status, body, retryAfter));
    this.status = status;
    this.body = body || {};
  }
}

function plainWords(status, body, retryAfter) {
  const said = body && body.error ? body.error : "";
  const field = body && body.field ? ` (${body.field})` : "";
  const wait = retryAfter ? ` Try again in ${retryAfter} seconds.` : " Try again shortly.";
  switch (status) {
    case 0: return "Could not reach the server. Check that docray serve is running.";
    case 401: return "The API key was not accepted. Enter a valid key above." +
      (said ? ` (The server said: ${said}.)` : "");
    case 404: return `Not found: ${said || "it may have been deleted"}.`;
    case 413: return `The file is too large. ${said}`;
    case 415: return `This file type is not supported. ${said}`;
    case 429: return "Too many requests with this key." + wait;
    case 503: return "The server is busy right now." + wait;
    case 504: return `The server took too long to answer. ${said}`;
    case 502: return `A part of the server failed. ${said}`;
    default:
      if (status >= 400 && status < 500) return `The request was not accepted${field}: ${said}`;
      return `Something went wrong on the server (${status}). ${said}`;
  }
}

function headers(extra) {
  const h = new Headers(extra || {});
  const key = getKey();
  if (key) h.set("Authorization", `Bearer ${key}`);
  return h;
}

async function failure(resp) {
  let body = {};
  try { body = await resp.json(); } catch (_) { body = {}; }
  return new ApiError(resp.status, body, resp.headers.get("Retry-After"));
}

export async function request(path, opts = {}) {
  let resp;
  try {
    resp = await fetch(path, { ...opts, headers: headers(opts.headers) });
  } catch (_) {
    throw new ApiError(0, {}, null);
  }
  if (!resp.ok) throw await failure(resp);
  return resp;
}

export async function json(path, opts) { return (await request(path, opts)).json(); }

export async function blobUrl(path) {
  return URL.createObjectURL(await (await request(path)).blob());
}

// POST /v1/query/stream, calling onEvent(name, data) per SSE event.
export async function stream(body, onEvent) {
  const resp = await request("/v1/query/stream", {
    method: "POST", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
  });
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      dispatch(buf.slice(0, cut), onEvent);
      buf = buf.slice(cut + 2);
    }
  }
  if (buf.trim()) dispatch(buf, onEvent);
}

function dispatch(block, onEvent) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
  }
  if (data.length) onEvent(name, JSON.parse(data.join("\n")));
}

export function describe(err) {
  return err instanceof ApiError ? err.message : `Unexpected error: ${err}`;
}
