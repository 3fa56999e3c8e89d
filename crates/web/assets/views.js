// The dashboard's views of the whole fleet: the journal, the fleet's graph with its limits
// and queue, the workers, and plots of spend, tokens, states and durations over time.

import { html, useState, useEffect } from "./preact-htm.js";
import { api, money, count, statusOf } from "./app.js";

// ---- the journal -----------------------------------------------------------------------

export function JournalView({ board }) {
  const entries = board.journal.slice().reverse();
  return html`<section><h2>Journal</h2>
    <table class="journal" id="journal"><thead><tr><th>#</th><th>when</th><th>task</th><th>what</th><th>who</th></tr></thead>
    <tbody>${entries.map((e) => html`<tr class="journal-entry" data-id=${e.id}>
      <td class="num">${e.id}</td><td>${new Date(e.at).toLocaleTimeString()}</td>
      <td>${e.slug ? html`<a href=${`#/task/${encodeURIComponent(e.slug)}`}>${e.slug}</a>` : ""}${e.round ? ` r${e.round}` : ""}</td>
      <td>${e.kind}${e.detail && e.detail.status ? `: ${e.detail.status}` : ""}${e.detail && e.detail.done ? ` — ${e.detail.done}` : ""}</td>
      <td>${e.commander || ""}</td></tr>`)}</tbody></table></section>`;
}

// ---- the fleet -------------------------------------------------------------------------

// Each fleet's tasks drawn as a graph: columns by dependency depth, an arrow from each task
// to what waits on it, each node coloured by its state.
function FleetGraph({ status, board }) {
  const tasks = status.tasks;
  const depth = new Map();
  const depthOf = (slug, seen = new Set()) => {
    if (depth.has(slug)) return depth.get(slug);
    if (seen.has(slug)) return 0;
    seen.add(slug);
    const t = tasks.find((x) => x.slug === slug);
    const d = t && t.after.length ? 1 + Math.max(...t.after.map((a) => depthOf(a, seen))) : 0;
    depth.set(slug, d);
    return d;
  };
  tasks.forEach((t) => depthOf(t.slug));
  const columns = [];
  for (const t of tasks) (columns[depth.get(t.slug)] ||= []).push(t);
  const at = new Map();
  const W = 170, H = 46;
  columns.forEach((col, c) => col.forEach((t, r) => at.set(t.slug, { x: 10 + c * (W + 40), y: 10 + r * (H + 16) })));
  const width = 20 + columns.length * (W + 40);
  const height = 20 + Math.max(1, ...columns.map((c) => c.length)) * (H + 16);
  const state = (t) => { const row = board.tasks.get(t.slug); return row ? statusOf(row) : t.queue; };
  return html`<svg class="fleet-graph" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`}>
    ${tasks.flatMap((t) => t.after.filter((a) => at.has(a)).map((a) => {
      const from = at.get(a), to = at.get(t.slug);
      return html`<line x1=${from.x + W} y1=${from.y + H / 2} x2=${to.x} y2=${to.y + H / 2} class="edge" />`;
    }))}
    ${tasks.map((t) => { const p = at.get(t.slug); return html`<g class=${`node s-${state(t)}`} transform=${`translate(${p.x},${p.y})`}>
      <a href=${`#/task/${encodeURIComponent(t.slug)}`}><rect width=${W} height=${H} rx="6" />
      <text x="8" y="18">${t.slug}</text><text x="8" y="36" class="small">${state(t)}${t.reason && t.reason !== state(t) ? `: ${t.reason}` : ""}</text></a></g>`; })}
  </svg>`;
}

// A fleet's limits in words: at most N at once, per agent, per model.
function limitsText(limits) {
  if (!limits) return "no limits";
  const parts = [];
  if (limits.global) parts.push(`at most ${limits.global} at once`);
  for (const [name, n] of Object.entries(limits.agents || {})) parts.push(`${name}: ${n}`);
  for (const [name, n] of Object.entries(limits.models || {})) parts.push(`${name}: ${n}`);
  return parts.length ? `limits: ${parts.join(", ")}` : "no limits";
}

export function FleetView({ board }) {
  const [fleets, setFleets] = useState(null);
  const [queue, setQueue] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    const load = async () => {
      try {
        const list = await api("/api/fleets");
        const full = await Promise.all(list.fleets.map((f) => api(`/api/fleets/${encodeURIComponent(f.name)}`)));
        setFleets(list.fleets.map((record, i) => [record, full[i]]));
        setQueue(await api("/api/queue"));
      } catch (e) { setError(e.message); }
    };
    load();
    const timer = setInterval(load, 2000);
    return () => clearInterval(timer);
  }, []);
  return html`<section id="fleet"><h2>Fleet</h2>
    ${error ? html`<p class="error-banner">${error}</p>` : ""}
    ${queue && queue.scheduler ? html`<p>Scheduler: pid ${queue.scheduler}</p>` : ""}
    ${queue && queue.paused.length ? html`<p>Paused models: ${queue.paused.map((p) => p.model).join(", ")}</p>` : ""}
    ${fleets && fleets.length === 0 ? html`<p class="muted">No fleet: <code>ganger fleet submit FILE</code>.</p>` : ""}
    ${(fleets || []).map(([record, f]) => html`<div class="fleet"><h3>${record.name}</h3>
      <p class="facts">${limitsText(record.limits)}${record.file ? ` — from ${record.file}` : ""}</p>
      <div class="scroll"><${FleetGraph} status=${f} board=${board} /></div></div>`)}
    ${queue && queue.tasks.length ? html`<h3>Queue</h3><table class="tasks"><thead><tr><th>task</th><th>kind</th><th>state</th><th>waits on</th></tr></thead>
      <tbody>${queue.tasks.map((t) => html`<tr><td>${t.slug}</td><td>${t.kind}</td><td>${t.queue}${t.reason ? `: ${t.reason}` : ""}</td><td>${t.after.join(", ")}</td></tr>`)}</tbody></table>` : ""}
  </section>`;
}

// ---- workers ---------------------------------------------------------------------------

// Every worker recorded in the store (`ganger workers`): its host, its load against its
// capacity (a dead one's is `–`, as in the CLI's table: it runs nothing), whether it lives, its agents and sandboxes, read every 2 s (a worker's load and
// life change without a journal entry).
export function WorkersView() {
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    const load = () => api("/api/workers").then((w) => { setList(w.workers); setError(null); }).catch((e) => setError(e.message));
    load();
    const timer = setInterval(load, 2000);
    return () => clearInterval(timer);
  }, []);
  const agent = (a) => (a.version ? `${a.name} ${a.version}` : a.name);
  return html`<section><h2>Workers</h2>
    ${error ? html`<p class="error-banner">${error}</p>` : ""}
    ${list && list.length === 0 ? html`<p class="muted">No worker: <code>ganger worker --capacity N</code> on each host, sharing the store.</p>` : ""}
    <div class="scroll"><table class="tasks" id="workers"><thead><tr><th>worker</th><th>host</th><th>load</th><th>state</th><th>agents</th><th>sandboxes</th><th>last seen</th></tr></thead>
    <tbody>${(list || []).map((w) => html`<tr class="worker" data-name=${w.name} data-alive=${w.alive}>
      <td>${w.name}</td><td>${w.host}</td><td class="num">${w.alive ? w.load : "–"} of ${w.capacity}</td>
      <td><span class=${`badge ${w.alive ? "s-done" : "s-failed"}`}>${w.alive ? "alive" : "dead"}</span></td>
      <td>${w.agents.map(agent).join(", ")}</td><td>${w.sandboxes.join(", ")}</td>
      <td>${new Date(w.seen_at).toLocaleTimeString()}</td></tr>`)}</tbody></table></div></section>`;
}

// ---- plots -----------------------------------------------------------------------------

function Bars({ title, rows, format = (v) => v }) {
  const top = Math.max(1, ...rows.map((r) => r.value));
  return html`<figure class="bars"><figcaption>${title}</figcaption>
    ${rows.length === 0 ? html`<p class="muted">Nothing yet.</p>` : ""}
    <svg width="100%" height=${rows.length * 22 + 4} viewBox=${`0 0 400 ${rows.length * 22 + 4}`} preserveAspectRatio="none">
      ${rows.map((r, i) => html`<g transform=${`translate(0,${i * 22})`}>
        <rect x="200" y="3" height="16" width=${(150 * r.value) / top} class=${`bar ${r.kind || ""}`} />
        <text x="196" y="15" text-anchor="end" class="small">${r.label}</text>
        <text x=${205 + (150 * r.value) / top} y="15" class="small">${format(r.value)}</text></g>`)}
    </svg></figure>`;
}

// A line over time: points [t, value], with a dashed line at `limit` when there is one.
function Line({ title, points, limit, format = (v) => v }) {
  const W = 400, H = 160, P = 36;
  if (points.length === 0) return html`<figure class="bars"><figcaption>${title}</figcaption><p class="muted">Nothing yet.</p></figure>`;
  const t0 = points[0][0], t1 = Math.max(points[points.length - 1][0], t0 + 1);
  const top = Math.max(limit || 0, ...points.map((p) => p[1])) || 1;
  const x = (t) => P + ((t - t0) / (t1 - t0)) * (W - P - 8);
  const y = (v) => H - 18 - (v / top) * (H - 30);
  const path = points.map((p, i) => `${i ? "L" : "M"}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
  return html`<figure class="bars"><figcaption>${title}</figcaption>
    <svg width="100%" viewBox=${`0 0 ${W} ${H}`} class="line-plot">
      <line x1=${P} y1=${H - 18} x2=${W - 8} y2=${H - 18} class="axis" />
      <path d=${path} class="series" />
      ${limit ? html`<line x1=${P} x2=${W - 8} y1=${y(limit)} y2=${y(limit)} class="budget" /><text x=${W - 10} y=${y(limit) - 3} text-anchor="end" class="small">budget ${format(limit)}</text>` : ""}
      <text x="2" y="12" class="small">${format(top)}</text>
      <text x=${P} y=${H - 4} class="small">${new Date(t0).toLocaleTimeString()}</text>
      <text x=${W - 8} y=${H - 4} text-anchor="end" class="small">${new Date(t1).toLocaleTimeString()}</text>
    </svg></figure>`;
}

// Rounds ended in each slice of time, stacked by state.
function StateColumns({ rounds }) {
  const W = 400, H = 160, N = 24;
  const ended = rounds.filter((r) => r.ended_at);
  if (ended.length === 0) return html`<figure class="bars"><figcaption>rounds by state over time</figcaption><p class="muted">Nothing yet.</p></figure>`;
  const t0 = Math.min(...ended.map((r) => r.ended_at)), t1 = Math.max(...ended.map((r) => r.ended_at)) + 1;
  const buckets = Array.from({ length: N }, () => new Map());
  for (const r of ended) {
    const b = Math.min(N - 1, Math.floor(((r.ended_at - t0) / (t1 - t0)) * N));
    buckets[b].set(r.status, (buckets[b].get(r.status) || 0) + 1);
  }
  const top = Math.max(1, ...buckets.map((b) => [...b.values()].reduce((a, c) => a + c, 0)));
  const states = [...new Set(ended.map((r) => r.status))].sort();
  const w = (W - 10) / N;
  return html`<figure class="bars"><figcaption>rounds by state over time (${states.join(", ")})</figcaption>
    <svg width="100%" viewBox=${`0 0 ${W} ${H}`}>
      ${buckets.map((b, i) => { let y = H - 16; return states.map((st) => {
        const n = b.get(st) || 0; const h = (n / top) * (H - 30); y -= h;
        return n ? html`<rect x=${5 + i * w} y=${y} width=${w - 2} height=${h} class=${`bar s-${st}`}><title>${st}: ${n}</title></rect>` : "";
      }); })}
      <text x="5" y=${H - 3} class="small">${new Date(t0).toLocaleTimeString()}</text>
      <text x=${W - 5} y=${H - 3} text-anchor="end" class="small">${new Date(t1).toLocaleTimeString()}</text>
      <text x="5" y="12" class="small">${top} per slice</text>
    </svg></figure>`;
}

export function PlotsView({ board }) {
  const [history, setHistory] = useState(null);
  // The scope may be named in the address: #/plots?scope=task:SLUG or fleet:NAME.
  const named = location.hash.match(/[?&]scope=([^&]+)/);
  const [scope, setScope] = useState(named ? decodeURIComponent(named[1]) : "all");
  const [error, setError] = useState(null);
  useEffect(() => {
    const load = () => api("/api/rounds").then((h) => { setHistory(h); setError(null); }).catch((e) => setError(e.message));
    load();
    const timer = setInterval(load, 5000);
    return () => clearInterval(timer);
  }, []);
  if (error) return html`<section id="plots"><h2>Plots</h2><p class="error-banner">${error}</p></section>`;
  if (!history) return html`<section id="plots"><h2>Plots</h2><p>Loading…</p></section>`;
  const fleets = [...new Set(history.rounds.map((r) => r.fleet).filter(Boolean))].sort();
  const tasks = [...new Set(history.rounds.map((r) => r.task))].sort();
  const chosen = history.rounds.filter((r) => scope === "all" || (scope.startsWith("fleet:") ? r.fleet === scope.slice(6) : r.task === scope.slice(5)));
  const budget = scope.startsWith("fleet:") ? history.fleet_budgets[scope.slice(6)]
    : scope.startsWith("task:") ? history.task_budgets[scope.slice(5)] : null;
  const cumulative = (key) => {
    let sum = 0;
    return chosen.filter((r) => r.ended_at || r.status === "running").sort((a, b) => (a.ended_at || Date.now()) - (b.ended_at || Date.now()))
      .map((r) => [r.ended_at || Date.now(), (sum += r[key])]);
  };
  const durations = new Map();
  for (const r of history.rounds) {
    if (!r.ended_at) continue;
    const key = `${r.agent} ${r.model || "default"}`;
    (durations.get(key) || durations.set(key, []).get(key)).push((r.ended_at - r.started_at) / 1000);
  }
  const durationRows = [...durations.entries()].flatMap(([label, list]) => {
    list.sort((a, b) => a - b);
    return [{ label: `${label} mean`, value: list.reduce((a, b) => a + b, 0) / list.length },
      { label: `${label} p95`, value: list[Math.floor(0.95 * (list.length - 1))] }];
  });
  return html`<section id="plots"><h2>Plots</h2>
    <div class="toolbar"><select id="plot-scope" value=${scope} onChange=${(e) => setScope(e.target.value)}>
      <option value="all">every task</option>
      ${fleets.map((f) => html`<option value=${`fleet:${f}`}>fleet ${f}</option>`)}
      ${tasks.map((t) => html`<option value=${`task:${t}`}>task ${t}</option>`)}
    </select><span class="summary">${chosen.length} rounds</span></div>
    <div class="plots">
      <${Line} title="spend over time (USD)" points=${cumulative("cost_usd")} limit=${budget && budget.usd} format=${money} />
      <${Line} title="tokens over time" points=${cumulative("tokens")} limit=${budget && budget.tokens} format=${count} />
      <${StateColumns} rounds=${chosen} />
      <${Bars} title="round duration by agent and model (s)" rows=${durationRows} format=${(v) => v.toFixed(1)} />
    </div></section>`;
}
