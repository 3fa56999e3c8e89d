// The dashboard's merge queue (docs/land.md): tasks queued to land from the page, the queue,
// the batches under test with their check runs so far (the bisection), the last batches, the
// tasks sent back and why, the flaky checks, and the conflicts predicted between open tasks
// ("t1 and t2 conflict in src/a.rs, lines 10-24"). It is live: /api/land and /api/conflicts
// are read again whenever the board (/api/events) journals a step of the queue or a conflict,
// and once more a second later (a lander journals a step before it records the batch's
// progress).

import { html, useState } from "./preact-htm.js";
import { api, useCoalesced } from "./app.js";

const short = (commit) => (commit || "").slice(0, 12);
const runs = (n) => `${n} check run${n === 1 ? "" : "s"}`;

// The id of the last journal entry whose kind starts with one of `prefixes`.
function lastEntry(board, prefixes) {
  for (let i = board.journal.length - 1; i >= 0; i--) {
    const kind = board.journal[i].kind || "";
    if (prefixes.some((p) => kind.startsWith(p))) return board.journal[i].id;
  }
  return 0;
}

// The last journal entry that changes what this view shows.
const landKey = (board) => lastEntry(board, ["land", "conflict"]);

// The conflicts predicted with task `slug` (for its own view), read again when one appears
// or is cleared.
export function TaskConflicts({ slug, board }) {
  const [found] = useCoalesced(() => api("/api/conflicts"), `${slug}|${lastEntry(board, ["conflict"])}`);
  const mine = found ? found.conflicts.filter((c) => c.task === slug || c.other === slug) : [];
  if (mine.length === 0) return "";
  return html`<ul class="task-conflicts">${mine.map((c) => html`<li class="task-conflict">conflict: ${conflictLine(c)}</li>`)}</ul>`;
}

// A predicted conflict as `ganger status` says it.
export function conflictLine(c) {
  const files = c.files.map((f) => (f.lines.length
    ? `${f.path}, lines ${f.lines.map(([a, b]) => `${a}-${b}`).join(", ")}` : f.path)).join("; ");
  return c.with_base ? `${c.task} conflicts with ${c.other} in ${files}` : `${c.task} and ${c.other} conflict in ${files}`;
}

function probeLine(p) {
  const tasks = p.tasks.length ? p.tasks.join(" + ") : "the base alone";
  const verdict = p.green ? "green" : `red (${p.failed.join(", ")})`;
  return `${tasks}: ${verdict}${p.flaky.length ? `, flaky: ${p.flaky.join(", ")}` : ""}`;
}

function Probes({ probes }) {
  if (!probes || probes.length === 0) return "";
  return html`<ol class="probes">${probes.map((p) => html`<li class=${`probe ${p.green ? "green" : "red"}`}>${probeLine(p)}</li>`)}</ol>`;
}

function batchLine(b) {
  const p = b.progress || {};
  const head = `batch ${b.batch} on ${b.base}`;
  if (b.state === "testing" || b.state === "landing") return `${head}: ${b.state}, ${runs(p.check_runs || 0)}`;
  const what = p.outcome === "landed" ? `landed ${p.landed.join(", ")}` : p.outcome || b.state;
  return `${head}: ${what}; ${runs(p.check_runs || 0)}${p.retries ? `, ${p.retries} failing check${p.retries === 1 ? "" : "s"} run again` : ""}`;
}

// Why a task was sent back, from its batch's report when there is one.
function returnedLine(entry, batches) {
  const batch = batches.find((b) => b.batch === entry.batch);
  const detail = batch && ((batch.progress || {}).returned || []).find((r) => r.task === entry.task);
  if (!detail) return { text: `${entry.task} sent back: ${entry.reason || "?"}`, tails: [] };
  const why = detail.reason === "conflict"
    ? `conflict in ${detail.files.join(", ")} (with ${detail.with.join(", ")})`
    : `culprit, breaks ${detail.checks.map((c) => c.name).join(", ")}`;
  return { text: `${entry.task} sent back: ${why}`, tails: detail.checks };
}

function QueueForm({ onQueued }) {
  const [tasks, setTasks] = useState("");
  const [fix, setFix] = useState(false);
  const [note, setNote] = useState(null);
  const queue = async (e) => {
    e.preventDefault();
    const names = tasks.split(/[\s,]+/).filter(Boolean);
    try {
      const sent = await api("/api/land", { method: "POST", body: { tasks: names, fix } });
      setNote({ ok: true, text: `queued ${sent.queued.map((q) => q.task).join(", ")}` });
      setTasks("");
      onQueued();
    } catch (error) {
      setNote({ ok: false, text: error.message });
    }
  };
  return html`<form class="toolbar" id="land-form" onSubmit=${queue}>
    <input id="land-tasks" placeholder="tasks to land: t1 t2" value=${tasks} onInput=${(e) => setTasks(e.target.value)} />
    <label><input id="land-fix" type="checkbox" checked=${fix} onChange=${(e) => setFix(e.target.checked)} /> send what fails back to its worker (--fix)</label>
    <button id="land-button" type="submit">Queue to land</button>
    ${note ? html`<span class=${note.ok ? "ok" : "error-banner"} id="land-note">${note.text}</span>` : ""}
  </form>`;
}

export function LandView({ board }) {
  const [found, error, reload] = useCoalesced(
    () => Promise.all([api("/api/land"), api("/api/conflicts")]), landKey(board), 1000);
  const [status, conflicts] = found ? [found[0], found[1].conflicts] : [null, null];
  const batches = status ? status.testing.concat(status.recent) : [];
  return html`<section id="land"><h2>Land</h2>
    <p class="muted">A lander lands the queue in batches whose combined checks pass: <code>ganger land --run</code>.</p>
    <${QueueForm} onQueued=${reload} />
    ${error ? html`<p class="error-banner">${error}</p>` : ""}
    ${!status ? html`<p>Loading…</p>` : html`<div>
      <h3>Queue</h3>
      ${status.queue.length === 0 ? html`<p class="muted">queue: empty</p>` : html`<div class="scroll"><table class="tasks"><thead><tr>
        <th>task</th><th>base</th><th>state</th><th>priority</th><th>commit</th><th>queued</th></tr></thead>
        <tbody>${status.queue.map((q) => html`<tr class="land-item" data-task=${q.task} data-state=${q.state}>
          <td><a href=${`#/task/${encodeURIComponent(q.task)}`}>${q.task}</a></td><td>${q.base}</td>
          <td><span class=${`badge s-${q.state === "testing" ? "running" : "pending"}`}>${q.state}</span>${q.batch ? ` (batch ${q.batch})` : ""}</td>
          <td class="num">${q.priority}</td><td><code>${short(q.commit)}</code></td>
          <td>${new Date(q.queued_at).toLocaleTimeString()}</td></tr>`)}</tbody></table></div>`}
      <h3>Under test</h3>
      ${status.testing.length === 0 ? html`<p class="muted">No batch under test.</p>` : ""}
      ${status.testing.map((b) => html`<div class="batch-testing"><p class="batch-line">${batchLine(b)}</p>
        <${Probes} probes=${(b.progress || {}).probes} /></div>`)}
      <h3>Last batches</h3>
      ${status.recent.length === 0 ? html`<p class="muted">None yet.</p>` : ""}
      ${status.recent.map((b) => html`<div class="batch-recent"><p class="batch-line">${batchLine(b)}</p>
        ${b.tip ? html`<p class="facts">the base moved to <code>${short(b.tip)}</code> from <code>${short(b.head)}</code></p>` : ""}
        <${Probes} probes=${(b.progress || {}).probes} /></div>`)}
      <h3>Sent back</h3>
      ${status.returned.length === 0 ? html`<p class="muted">Nothing.</p>` : ""}
      <ul>${status.returned.map((entry) => {
        const { text, tails } = returnedLine(entry, batches);
        return html`<li><span class="returned">${text}</span>
          ${tails.map((c) => html`<details><summary>${c.name}'s output</summary><pre>${c.tail}</pre></details>`)}</li>`;
      })}</ul>
      <h3>Flaky checks</h3>
      ${status.flaky.length === 0 ? html`<p class="muted">None.</p>` : html`<ul>${status.flaky.map((f) => html`<li class="flaky">${f}</li>`)}</ul>`}
    </div>`}
    <h3>Predicted conflicts</h3>
    ${conflicts && conflicts.length === 0 ? html`<p class="muted">None: the open tasks merge with one another and with their bases.</p>` : ""}
    <ul>${(conflicts || []).map((c) => html`<li class="conflict">${conflictLine(c)}</li>`)}</ul>
  </section>`;
}
