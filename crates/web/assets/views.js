// The dashboard's views beyond the table: a task (its rounds, prompt, answer, events as they
// stream, checks, diffs with syntax colouring and review comments, actions), its pipeline,
// the journal, the fleet's graph, and plots.

import { html, useState, useEffect, useMemo, useRef } from "./preact-htm.js";
import hljs from "./highlight.js";
import { api, follow, money, count, statusOf, session } from "./app.js";

// ---- a task ----------------------------------------------------------------------------

// A task's rounds and their lines, live from /api/tasks/SLUG/events (from round 1, so a
// reload shows every line again, from the store).
function useTaskFeed(slug) {
  const [feed, setFeed] = useState({ rounds: new Map(), state: "connecting", error: null });
  useEffect(() => {
    const rounds = new Map();
    let frame = null;
    const publish = () => { frame = null; setFeed((f) => ({ ...f, rounds: new Map(rounds) })); };
    const soon = () => { if (frame === null) frame = requestAnimationFrame(publish); };
    const stop = follow(`/api/tasks/${encodeURIComponent(slug)}/events?round=1`, (name, data) => {
      if (name === "round") {
        const known = rounds.get(data.round) || { lines: [] };
        rounds.set(data.round, { ...known, report: data });
      } else if (name === "line") {
        const known = rounds.get(data.round) || { lines: [] };
        known.lines = known.lines.concat([data.line]);
        rounds.set(data.round, known);
      }
      soon();
    }, (state, error) => setFeed((f) => ({ ...f, state, error: error || null })));
    return stop;
  }, [slug]);
  return feed;
}

function describe(event) {
  const detail = event.text ?? event.title ?? event.name ?? event.message ?? event.id ?? "";
  const extra = event.status ? ` [${event.status}]` : "";
  return `${detail}${extra}`;
}

function EventLines({ lines }) {
  const box = useRef(null);
  useEffect(() => { if (box.current) box.current.scrollTop = box.current.scrollHeight; }, [lines.length]);
  return html`<div class="events" id="events" ref=${box}>
    ${lines.slice(-2000).map((line) => html`<div class="event-line" data-number=${line.number}>
      <span class="n">${line.number}</span>
      ${line.events.length === 0 ? html`<span class="kind">${line.kind || "?"}</span>` : ""}
      ${line.events.map((e) => html`<span class=${`ev ev-${e.event}`}><b>${e.event}</b> ${describe(e)}</span>`)}
    </div>`)}
  </div>`;
}

function Checks({ checks }) {
  if (!checks || checks.length === 0) return html`<p class="muted">No checks.</p>`;
  return html`<ul class="checks" id="checks">${checks.map((c) => html`<li class=${`check c-${c.state}`}>
    <b>${c.name}</b> <code>${c.command}</code> <span class=${`badge s-${c.state}`}>${c.state}</span>
    ${c.exit_code !== null && c.exit_code !== undefined ? ` exit ${c.exit_code}` : ""}
    ${c.duration_ms ? ` in ${(c.duration_ms / 1000).toFixed(1)}s` : ""}
    ${c.tail ? html`<pre class="tail">${c.tail}</pre>` : ""}
  </li>`)}</ul>`;
}

// A unified diff read into files and lines, each line with its number in the new file (or
// the old one for a removed line).
function parseDiff(text) {
  const files = [];
  let file = null, oldLine = 0, newLine = 0;
  for (const raw of text.split("\n")) {
    if (raw.startsWith("diff --git ")) {
      const m = raw.match(/ b\/(.*)$/);
      file = { path: m ? m[1] : raw, lines: [] };
      files.push(file);
      continue;
    }
    if (!file) continue;
    if (raw.startsWith("+++ ")) { if (raw !== "+++ /dev/null") file.path = raw.slice(6); continue; }
    if (raw.startsWith("--- ") || raw.startsWith("index ") || raw.startsWith("new file") ||
        raw.startsWith("deleted file") || raw.startsWith("similarity") || raw.startsWith("rename ")) continue;
    const hunk = raw.match(/^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/);
    if (hunk) {
      oldLine = Number(hunk[1]); newLine = Number(hunk[2]);
      file.lines.push({ kind: "hunk", text: raw });
      continue;
    }
    if (raw.startsWith("+")) file.lines.push({ kind: "add", text: raw.slice(1), line: newLine++ });
    else if (raw.startsWith("-")) file.lines.push({ kind: "del", text: raw.slice(1), line: oldLine++, old: true });
    else if (raw.startsWith(" ")) { file.lines.push({ kind: "ctx", text: raw.slice(1), line: newLine++ }); oldLine++; }
  }
  return files;
}

function languageOf(path) {
  const ext = (path.split(".").pop() || "").toLowerCase();
  const names = { rs: "rust", js: "javascript", ts: "typescript", py: "python", sh: "bash", md: "markdown", toml: "ini", yml: "yaml" };
  const name = names[ext] || ext;
  return hljs.getLanguage(name) ? name : null;
}

function highlighted(text, language) {
  if (!language) return null;
  try { return hljs.highlight(text, { language, ignoreIllegals: true }).value; } catch (e) { return null; }
}

// A diff with lines to select (click, shift-click for a range) and comment on.
function Diff({ text, onComment }) {
  const files = useMemo(() => parseDiff(text || ""), [text]);
  const [selection, setSelection] = useState(null);
  const [note, setNote] = useState("");
  if (!text) return html`<p class="muted">No changes.</p>`;
  const pick = (fileIndex, index, shift) => {
    setSelection((s) => (shift && s && s.file === fileIndex
      ? { file: fileIndex, from: Math.min(s.from, index), to: Math.max(s.from, index) }
      : { file: fileIndex, from: index, to: index }));
  };
  const add = () => {
    const file = files[selection.file];
    const lines = file.lines.slice(selection.from, selection.to + 1).filter((l) => l.kind !== "hunk");
    if (!note.trim() || lines.length === 0) return;
    onComment({ path: file.path, lines, text: note.trim() });
    setNote(""); setSelection(null);
  };
  return html`<div class="diff" id="diff">${files.map((file, fi) => {
    const language = languageOf(file.path);
    return html`<div class="diff-file"><h4>${file.path}</h4>
      <table>${file.lines.map((l, i) => {
        const chosen = selection && selection.file === fi && i >= selection.from && i <= selection.to;
        const colored = l.kind === "hunk" ? null : highlighted(l.text, language);
        return html`<tr class=${`diff-line d-${l.kind}${chosen ? " chosen" : ""}`} data-file=${file.path}
            data-line=${l.line ?? ""} onClick=${(e) => l.kind !== "hunk" && pick(fi, i, e.shiftKey)}>
          <td class="ln">${l.line ?? ""}</td>
          <td class="sign">${l.kind === "add" ? "+" : l.kind === "del" ? "-" : ""}</td>
          ${colored !== null
            ? html`<td class="code hljs" dangerouslySetInnerHTML=${{ __html: colored }}></td>`
            : html`<td class="code">${l.text}</td>`}
        </tr>`;
      })}</table>
      ${selection && selection.file === fi ? html`<div class="comment-box">
        <textarea id="comment-text" placeholder="your comment on the selected lines" value=${note}
          onInput=${(e) => setNote(e.target.value)} />
        <button id="add-comment" onClick=${add}>Add comment</button>
        <button onClick=${() => setSelection(null)}>Cancel</button>
      </div>` : ""}
    </div>`;
  })}</div>`;
}

// The next round's prompt from review comments: each file, line and comment, quoted.
export function reviewPrompt(comments, who) {
  const parts = [`Review comments on your changes (from ${who} on the dashboard):`, ""];
  comments.forEach((c, i) => {
    const first = c.lines[0], last = c.lines[c.lines.length - 1];
    const where = first.line === last.line ? `line ${first.line}` : `lines ${first.line}-${last.line}`;
    parts.push(`${i + 1}. ${c.path}, ${first.old ? "old " : ""}${where}:`);
    for (const l of c.lines) parts.push(`   > ${l.kind === "add" ? "+" : l.kind === "del" ? "-" : " "}${l.text}`);
    parts.push(`   ${c.text.split("\n").join("\n   ")}`, "");
  });
  parts.push("Address each comment, and end with a DONE: line.");
  return parts.join("\n");
}

function Actions({ slug, running, onDone }) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState("");
  const [interrupt, setInterrupt] = useState(false);
  const act = async (path, body, what) => {
    setBusy(true); setError(null);
    try {
      await api(`/api/tasks/${encodeURIComponent(slug)}/${path}`, { method: "POST", body: body || {} });
      onDone(`${what}: done`);
    } catch (e) {
      setError(`${what}: ${e.message}`);
    } finally {
      setBusy(false);
    }
  };
  const readOnly = session.whoami && session.whoami.access !== "write";
  return html`<div class="actions">
    <div class="buttons">
      <button id="cancel-button" disabled=${busy || !running} onClick=${() => act("cancel", {}, "cancel")}>Cancel round</button>
      <button id="merge-button" disabled=${busy} onClick=${() => act("merge", {}, "merge")}>Merge</button>
      <button id="approve-button" disabled=${busy} onClick=${() => act("approve", {}, "approve")}>Approve plan</button>
      <button id="reject-button" disabled=${busy} onClick=${() => {
        const notes = prompt("Notes for the planner:");
        if (notes) act("reject", { notes }, "reject");
      }}>Reject plan</button>
      <button id="transfer-button" disabled=${busy} onClick=${() => {
        const to = prompt("Transfer to which commander?");
        if (to) act("transfer", { to }, "transfer");
      }}>Transfer</button>
    </div>
    <form class="fix" onSubmit=${(e) => { e.preventDefault(); if (message.trim()) act("fix", { message, interrupt }, "fix").then(() => setMessage("")); }}>
      <textarea id="fix-message" placeholder="the next round's prompt" value=${message} onInput=${(e) => setMessage(e.target.value)} />
      <label><input type="checkbox" checked=${interrupt} onChange=${(e) => setInterrupt(e.target.checked)} /> interrupt a running round</label>
      <button id="fix-button" type="submit" disabled=${busy}>Send round</button>
    </form>
    ${readOnly ? html`<p class="muted">Your token is read-only: actions are refused.</p>` : ""}
    ${error ? html`<p class="error-banner" id="action-error">${error}</p>` : ""}
  </div>`;
}

function Pipeline({ slug, rounds }) {
  const [report, setReport] = useState(null);
  useEffect(() => {
    api(`/api/tasks/${encodeURIComponent(slug)}/report`).then(setReport).catch(() => setReport(null));
  }, [slug, rounds]);
  if (!report || report.schema !== "ganger.pipeline/1") return null;
  return html`<section class="pipeline" id="pipeline"><h3>Pipeline: ${report.stage}</h3>
    ${report.reason ? html`<p class="error-banner">${report.reason}</p>` : ""}
    <p>Plan v${report.plan.version}: ${report.plan.steps_done} of ${report.plan.steps_total} steps done</p>
    <ol>${report.plan.steps.map((s, i) => html`<li class=${i < report.plan.steps_done ? "step-done" : ""}>${s}</li>`)}</ol>
    <h4>Reviewers (review round ${report.review_round} of ${report.review_rounds})</h4>
    <ul>${report.reviewers.map((r) => html`<li><b>${r.reviewer}</b> <span class=${`badge v-${r.verdict}`}>${r.verdict}</span>
      ${r.findings.length ? html`<ul>${r.findings.map((f) => html`<li>${f}</li>`)}</ul>` : ""}</li>`)}</ul>
    <h4>Roles (the critic's verdict is its task's answer)</h4>
    <table class="tasks"><thead><tr><th>role</th><th>task</th><th>agent</th><th>rounds</th><th>last</th><th>cost</th></tr></thead>
    <tbody>${report.roles.map((r) => html`<tr><td>${r.role}</td>
      <td><a href=${`#/task/${encodeURIComponent(r.task)}`}>${r.task}</a></td>
      <td>${r.agent} ${r.model || ""}</td><td class="num">${r.rounds}</td>
      <td><span class=${`badge s-${r.last_status || "none"}`}>${r.last_status || "none"}</span></td>
      <td class="num">${money(r.cost_usd)}</td></tr>`)}</tbody></table>
  </section>`;
}

export function TaskView({ slug, board }) {
  const feed = useTaskFeed(slug);
  const task = board.tasks.get(slug);
  const numbers = [...feed.rounds.keys()].sort((a, b) => a - b);
  const [chosen, setChosen] = useState(null);
  const current = chosen ?? numbers[numbers.length - 1];
  const round = feed.rounds.get(current);
  const report = round && round.report;
  const [prompt, setPrompt] = useState(null);
  const [diffScope, setDiffScope] = useState("task");
  const [diff, setDiff] = useState(null);
  const [comments, setComments] = useState([]);
  const [note, setNote] = useState(null);
  const ended = report && report.status !== "running";
  useEffect(() => {
    if (!current) return;
    api(`/api/tasks/${encodeURIComponent(slug)}/rounds/${current}`).then((r) => setPrompt(r.prompt)).catch(() => setPrompt(null));
  }, [slug, current]);
  useEffect(() => {
    const path = diffScope === "task" ? `/api/tasks/${encodeURIComponent(slug)}/diff`
      : `/api/tasks/${encodeURIComponent(slug)}/rounds/${current}/diff`;
    if (diffScope !== "task" && !ended) { setDiff({ text: "", note: "the round runs: its diff comes when it ends" }); return; }
    api(path).then((text) => setDiff({ text, note: null })).catch((e) => setDiff({ text: "", note: e.message }));
  }, [slug, current, diffScope, ended, task && task.rounds, task && task.status]);
  const send = async () => {
    const who = session.whoami ? session.whoami.commander : "the reviewer";
    try {
      await api(`/api/tasks/${encodeURIComponent(slug)}/fix`, { method: "POST", body: { message: reviewPrompt(comments, who) } });
      setComments([]); setChosen(null);
      setNote({ ok: true, text: "comments sent as the next round" });
    } catch (e) {
      setNote({ ok: false, text: `sending the comments: ${e.message}` });
    }
  };
  return html`<section class="task-view" id="task-view" data-slug=${slug}>
    <h2>${slug} ${task ? html`<span class=${`badge s-${statusOf(task)}`} id="task-status">${statusOf(task)}</span>` : ""}</h2>
    ${task ? html`<p class="facts">${`${task.agent}, ${task.model || "default model"}; owner ${task.owner || "nobody"}; ${task.rounds} rounds; ${money(task.cost_usd)}; ${count(task.tokens)} tokens`}
      ${Object.entries(task.labels).map(([k, v]) => html` <span class="label">${k}=${v}</span>`)}
      ${task.done ? html`<br /><span class="done">${task.done}</span>` : ""}</p>` : ""}
    ${feed.error ? html`<p class="error-banner">${feed.error}</p>` : ""}
    <${Actions} slug=${slug} running=${task && task.status === "running"} onDone=${(text) => setNote({ ok: true, text })} />
    ${note ? html`<p class=${note.ok ? "ok" : "error-banner"} id="task-note">${note.text}</p>` : ""}
    <${Pipeline} slug=${slug} rounds=${task && task.rounds} />
    <nav class="rounds" id="rounds">${numbers.map((n) => {
      const r = feed.rounds.get(n).report;
      return html`<button class=${`round-tab${n === current ? " current" : ""}`} data-round=${n}
        onClick=${() => setChosen(n)}>round ${n} <span class=${`badge s-${r ? r.status : "none"}`}>${r ? r.status : "…"}</span></button>`;
    })}</nav>
    ${report ? html`<div class="round" id="round" data-round=${current} data-status=${report.status}>
      <p class="facts">${`${report.kind} by ${report.commander}; ${report.status}${report.reason ? `: ${report.reason}` : ""}; ${report.duration_ms ? `${(report.duration_ms / 1000).toFixed(1)} s; ` : ""}${money(report.cost_usd)}; ${count(report.tokens.input)} in / ${count(report.tokens.output)} out`}</p>
      <div class="columns">
        <div><h3>Prompt</h3><pre class="prompt" id="prompt">${prompt ?? ""}</pre></div>
        <div><h3>Answer</h3><pre class="answer" id="answer">${report.answer ?? ""}</pre></div>
      </div>
      <h3>Events (${round.lines.length})</h3>
      <${EventLines} lines=${round.lines} />
      <h3>Checks</h3>
      <${Checks} checks=${report.checks} />
    </div>` : html`<p class="muted">No round yet.</p>`}
    <h3>Diff
      <select id="diff-scope" value=${diffScope} onChange=${(e) => setDiffScope(e.target.value)}>
        <option value="task">the task against its base</option>
        <option value="round">round ${current}</option>
      </select></h3>
    ${diff && diff.note ? html`<p class="muted">${diff.note}</p>` : ""}
    <${Diff} text=${diff ? diff.text : ""} onComment=${(c) => setComments((all) => all.concat([c]))} />
    ${comments.length ? html`<section class="review" id="review">
      <h3>Review comments (${comments.length})</h3>
      <ol>${comments.map((c, i) => html`<li>${c.path}:${c.lines[0].line} ${c.text}
        <button onClick=${() => setComments((all) => all.filter((_, j) => j !== i))}>remove</button></li>`)}</ol>
      <button id="send-comments" onClick=${send}>Send ${comments.length} comment${comments.length > 1 ? "s" : ""} as the next round</button>
    </section>` : ""}
  </section>`;
}

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
