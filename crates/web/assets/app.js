// ganger's dashboard: the shell (token, routing, the live board), and the task table.
// Preact + htm from vendor/ (no build step; see docs/design.md, "The dashboard").
// Every API call carries the viewer's token in the Authorization header (never a cookie,
// never the URL), and so does every event stream: streams are read with fetch, not
// EventSource, which cannot send headers.

import { html, render, useState, useEffect, useMemo, useRef } from "./preact-htm.js";
import { TaskView } from "./task_view.js";
import { JournalView, FleetView, PlotsView, WorkersView } from "./views.js";
import { RacesView, RaceView } from "./race_view.js";
import { LandView } from "./land_view.js";

const TOKEN_KEY = "ganger-token";

// The token: from `#token=...` once (then taken out of the address bar), then from this
// tab's storage, so a reload keeps it and no other site or tab sees it.
function takeToken() {
  const match = location.hash.match(/[#&]token=([^&]+)/);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    const rest = location.hash.replace(/[#&]token=[^&]+/, "").replace(/^&/, "#");
    history.replaceState(null, "", location.pathname + (rest.length > 1 ? rest : "#/"));
  }
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export const session = { token: takeToken(), whoami: null };

// A JSON request to the API; failures throw the server's `ganger.error/1` message.
export async function api(path, options = {}) {
  const headers = { Authorization: `Bearer ${session.token}` };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const reply = await fetch(path, {
    method: options.method || "GET",
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const type = reply.headers.get("content-type") || "";
  const data = type.includes("json") ? await reply.json() : await reply.text();
  if (!reply.ok) {
    const message = data && data.error ? data.error : `${reply.status} ${reply.statusText}`;
    throw new Error(message);
  }
  return data;
}

// Follows a server-sent event stream: each event to `onEvent(name, data, id)`; on a drop it
// reconnects with the last id seen (Last-Event-ID), so nothing is missed or repeated.
// Returns a function that stops it.
export function follow(path, onEvent, onState = () => {}) {
  let stopped = false;
  let lastId = null;
  let controller = null;
  let delay = 250;
  async function run() {
    while (!stopped) {
      controller = new AbortController();
      try {
        const headers = { Authorization: `Bearer ${session.token}`, Accept: "text/event-stream" };
        if (lastId !== null) headers["Last-Event-ID"] = lastId;
        const reply = await fetch(path, { headers, signal: controller.signal });
        if (!reply.ok) {
          const data = await reply.json().catch(() => ({}));
          onState("error", data.error || `${reply.status}`);
          if (reply.status === 401 || reply.status === 403 || reply.status === 404) return;
          throw new Error("stream refused");
        }
        onState("live");
        delay = 250;
        const reader = reply.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let name = "message", id = null, data = "";
            for (const line of block.split("\n")) {
              if (line.startsWith("event:")) name = line.slice(6).trim();
              else if (line.startsWith("id:")) id = line.slice(3).trim();
              else if (line.startsWith("data:")) data += line.slice(5).replace(/^ /, "");
            }
            if (id !== null) lastId = id;
            if (data) onEvent(name, JSON.parse(data), id);
          }
        }
      } catch (e) {
        if (stopped) return;
      }
      if (stopped) return;
      onState("reconnecting");
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 5000);
    }
  }
  run();
  return () => {
    stopped = true;
    if (controller) controller.abort();
  };
}

// Calls `load()` (a promise) whenever `key` changes, one call at a time: changes while one
// runs ask for one more after it, however many they are, so a burst of events costs two
// requests. With `settle` (ms), a change is read once more that long after: a writer that
// journals a step before it records what the step did (the lander) is then read as it ended.
// Returns [the last value, the last error, a function that asks again].
export function useCoalesced(load, key, settle = 0) {
  const [state, setState] = useState({ value: null, error: null });
  const loader = useRef(load);
  loader.current = load;
  const run = useRef({ busy: false, again: false, alive: true, timer: null });
  const go = (trailing = false) => {
    const r = run.current;
    if (r.busy) { r.again = true; return; }
    r.busy = true;
    clearTimeout(r.timer);
    loader.current()
      .then((value) => { if (r.alive) setState({ value, error: null }); })
      .catch((e) => { if (r.alive) setState((s) => ({ ...s, error: e.message })); })
      .finally(() => {
        r.busy = false;
        if (!r.alive) return;
        if (r.again) { r.again = false; go(); }
        else if (settle && !trailing) r.timer = setTimeout(() => go(true), settle);
      });
  };
  useEffect(() => {
    run.current.alive = true;
    return () => { run.current.alive = false; clearTimeout(run.current.timer); };
  }, []);
  useEffect(() => go(), [key]);
  return [state.value, state.error, () => go()];
}

export const money = (usd) => (usd ? `$${usd.toFixed(usd < 1 ? 4 : 2)}` : "–");
export const count = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : `${n || 0}`);
export const statusOf = (task) => task.status || "none";

// The board: every task's row and the journal, kept live by /api/events.
function useBoard() {
  const [board, setBoard] = useState({ tasks: new Map(), journal: [], state: "connecting", error: null });
  useEffect(() => {
    let tasks = new Map();
    let journal = [];
    let frame = null;
    const publish = () => {
      frame = null;
      setBoard((b) => ({ ...b, tasks: new Map(tasks), journal: journal.slice() }));
    };
    const soon = () => { if (frame === null) frame = requestAnimationFrame(publish); };
    const stop = follow("/api/events", (name, data) => {
      if (name === "tasks") {
        tasks = new Map(data.tasks.map((t) => [t.slug, t]));
        publish();
        return;
      }
      if (name === "task") tasks.set(data.slug, data);
      else if (name === "task-gone") tasks.delete(data.slug);
      else if (name === "journal") {
        journal.push(data);
        if (journal.length > 2000) journal = journal.slice(-2000);
      }
      soon();
    }, (state, error) => setBoard((b) => ({ ...b, state, error: error || null })));
    return stop;
  }, []);
  return board;
}

const COLUMNS = [
  ["status", "status"], ["slug", "task"], ["agent", "agent"], ["model", "model"],
  ["owner", "owner"], ["labels", "labels"], ["rounds", "rounds"], ["cost_usd", "cost"],
  ["tokens", "tokens"], ["done", "last DONE: line"],
];

function sortValue(task, key) {
  if (key === "labels") return Object.entries(task.labels).map(([k, v]) => `${k}=${v}`).join(",");
  if (key === "status") return statusOf(task);
  const value = task[key];
  return value === null || value === undefined ? "" : value;
}

function TaskRow({ task }) {
  const labels = Object.entries(task.labels);
  return html`<tr class="task-row" data-slug=${task.slug} data-status=${statusOf(task)}>
    <td data-label="status"><span class=${`badge s-${statusOf(task)}`}>${statusOf(task)}</span></td>
    <td data-label="task"><a href=${`#/task/${encodeURIComponent(task.slug)}`}>${task.slug}</a>
      ${task.role ? html` <small>(${task.role} of ${task.parent})</small>` : ""}
      ${task.fleet && task.fleet.startsWith("race:") ? html` <small>(<a href=${`#/race/${encodeURIComponent(task.fleet.slice(5))}`}>race ${task.fleet.slice(5)}</a>)</small>` : ""}</td>
    <td data-label="agent">${task.agent}</td>
    <td data-label="model">${task.model || "default"}</td>
    <td data-label="owner">${task.owner || "nobody"}</td>
    <td data-label="labels">${labels.map(([k, v]) => html`<span class="label">${k}=${v}</span>`)}</td>
    <td data-label="rounds" class="num">${task.rounds}</td>
    <td data-label="cost" class="num">${money(task.cost_usd)}</td>
    <td data-label="tokens" class="num">${count(task.tokens)}</td>
    <td data-label="done" class="done">${task.done || ""}</td>
  </tr>`;
}

function TaskTable({ board }) {
  const [filter, setFilter] = useState("");
  const [status, setStatus] = useState("");
  const [sort, setSort] = useState({ key: "slug", up: true });
  const [group, setGroup] = useState("");
  const tasks = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    const rows = [...board.tasks.values()].filter((t) => {
      if (status && statusOf(t) !== status) return false;
      if (!needle) return true;
      const text = [t.slug, t.agent, t.model, t.owner, t.done, t.fleet,
        ...Object.entries(t.labels).map(([k, v]) => `${k}=${v}`)].join(" ").toLowerCase();
      return text.includes(needle);
    });
    rows.sort((a, b) => {
      const x = sortValue(a, sort.key), y = sortValue(b, sort.key);
      const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return sort.up ? order : -order;
    });
    return rows;
  }, [board.tasks, filter, status, sort]);
  const labelKeys = useMemo(() => {
    const keys = new Set();
    for (const t of board.tasks.values()) for (const k of Object.keys(t.labels)) keys.add(k);
    return [...keys].sort();
  }, [board.tasks]);
  const statuses = useMemo(() => [...new Set([...board.tasks.values()].map(statusOf))].sort(), [board.tasks]);
  const groups = useMemo(() => {
    if (!group) return [["", tasks]];
    const by = new Map();
    for (const t of tasks) {
      const value = t.labels[group] ?? "(none)";
      if (!by.has(value)) by.set(value, []);
      by.get(value).push(t);
    }
    return [...by.entries()].sort(([a], [b]) => a.localeCompare(b));
  }, [tasks, group]);
  const header = html`<tr>${COLUMNS.map(([key, name]) => html`<th
      onClick=${() => setSort((s) => ({ key, up: s.key === key ? !s.up : true }))}
      class=${sort.key === key ? (sort.up ? "sorted up" : "sorted down") : ""}>${name}</th>`)}</tr>`;
  return html`<section>
    <div class="toolbar">
      <input id="filter" type="search" placeholder="filter: task, owner, label, DONE line"
        value=${filter} onInput=${(e) => setFilter(e.target.value)} />
      <select id="status-filter" value=${status} onChange=${(e) => setStatus(e.target.value)}>
        <option value="">every status</option>
        ${statuses.map((s) => html`<option value=${s}>${s}</option>`)}
      </select>
      <select id="group-by" value=${group} onChange=${(e) => setGroup(e.target.value)}>
        <option value="">no grouping</option>
        ${labelKeys.map((k) => html`<option value=${k}>group by ${k}</option>`)}
      </select>
      <span class="summary" id="task-count">${tasks.length} of ${board.tasks.size} tasks</span>
    </div>
    <table id="task-table" class="tasks">
      <thead>${header}</thead>
      ${groups.map(([name, rows]) => html`<tbody>
        ${group ? html`<tr class="group"><th colspan=${COLUMNS.length}>${group} = ${name} (${rows.length})</th></tr>` : ""}
        ${rows.map((t) => html`<${TaskRow} key=${t.slug} task=${t} />`)}
      </tbody>`)}
    </table>
    ${board.tasks.size === 0 ? html`<p class="empty">No tasks yet: <code>ganger start SLUG --message TEXT</code>, or start one below.</p>` : ""}
    <${StartForm} />
  </section>`;
}

function StartForm() {
  const [slug, setSlug] = useState("");
  const [message, setMessage] = useState("");
  const [note, setNote] = useState(null);
  const start = async (e) => {
    e.preventDefault();
    try {
      const sent = await api("/api/tasks", { method: "POST", body: { slug, message } });
      setNote({ ok: true, text: `started ${sent.task || slug}` });
      setSlug(""); setMessage("");
    } catch (error) {
      setNote({ ok: false, text: error.message });
    }
  };
  return html`<details class="start"><summary>Start a task</summary>
    <form onSubmit=${start}>
      <input id="start-slug" placeholder="slug" value=${slug} onInput=${(e) => setSlug(e.target.value)} />
      <textarea id="start-message" placeholder="the brief" value=${message} onInput=${(e) => setMessage(e.target.value)} />
      <button id="start-button" type="submit">Start</button>
      ${note ? html`<p class=${note.ok ? "ok" : "error-banner"}>${note.text}</p>` : ""}
    </form></details>`;
}

function TokenForm({ onToken }) {
  const [value, setValue] = useState("");
  return html`<section class="token-form">
    <h2>Token</h2>
    <p>Paste a token: the owner's is in <code>.ganger/web/token</code>; viewers get theirs from
      <code>.ganger/web/tokens.toml</code>. It stays in this tab only.</p>
    <form onSubmit=${(e) => { e.preventDefault(); onToken(value.trim()); }}>
      <input id="token-input" type="password" autocomplete="off" value=${value} onInput=${(e) => setValue(e.target.value)} />
      <button type="submit">Use it</button>
    </form></section>`;
}

function useRoute() {
  const [route, setRoute] = useState(location.hash || "#/");
  useEffect(() => {
    const changed = () => setRoute(location.hash || "#/");
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}

function App() {
  const [token, setToken] = useState(session.token);
  const [me, setMe] = useState(null);
  const [refused, setRefused] = useState(null);
  const route = useRoute();
  useEffect(() => {
    if (!token) return;
    session.token = token;
    api("/api/whoami").then((who) => { session.whoami = who; setMe(who); setRefused(null); })
      .catch((e) => setRefused(e.message));
  }, [token]);
  if (!token || refused) {
    return html`<${Shell} me=${null}>
      ${refused ? html`<p class="error-banner">${refused}</p>` : ""}
      <${TokenForm} onToken=${(t) => { sessionStorage.setItem(TOKEN_KEY, t); setRefused(null); setToken(t); }} />
    <//>`;
  }
  if (!me) return html`<${Shell} me=${null}><p>Connecting…</p><//>`;
  return html`<${Shell} me=${me}><${Routed} route=${route} /><//>`;
}

function Routed({ route }) {
  const board = useBoard();
  const task = route.match(/^#\/task\/([^/]+)/);
  const race = route.match(/^#\/race\/([^/]+)/);
  let view;
  if (task) view = html`<${TaskView} slug=${decodeURIComponent(task[1])} board=${board} />`;
  else if (route.startsWith("#/journal")) view = html`<${JournalView} board=${board} />`;
  else if (route.startsWith("#/fleet")) view = html`<${FleetView} board=${board} />`;
  else if (route.startsWith("#/plots")) view = html`<${PlotsView} board=${board} />`;
  else if (route.startsWith("#/workers")) view = html`<${WorkersView} />`;
  else if (route.startsWith("#/races")) view = html`<${RacesView} board=${board} />`;
  else if (race) view = html`<${RaceView} slug=${decodeURIComponent(race[1])} board=${board} />`;
  else if (route.startsWith("#/land")) view = html`<${LandView} board=${board} />`;
  else view = html`<${TaskTable} board=${board} />`;
  return html`<div>
    <p id="live" class=${`live ${board.state}`}>${board.state === "live" ? "live" : board.state}${board.error ? `: ${board.error}` : ""}</p>
    ${view}
  </div>`;
}

function Shell({ me, children }) {
  return html`<div class="shell">
    <header>
      <h1><a href="#/">ganger</a></h1>
      <nav>
        <a href="#/">tasks</a><a href="#/journal">journal</a><a href="#/fleet">fleet</a><a href="#/workers">workers</a><a href="#/plots">plots</a><a href="#/races">races</a><a href="#/land">land</a>
      </nav>
      <span class="me" id="whoami">${me ? `${me.commander} (${me.access})` : ""}</span>
    </header>
    <main>${children}</main>
  </div>`;
}

render(html`<${App} />`, document.getElementById("app"));
