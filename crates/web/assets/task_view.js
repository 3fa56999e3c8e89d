// The dashboard's task view: a task's rounds, each round's prompt and answer, the agent's
// events as they stream, the conflicts predicted with other tasks, checks with their output, the task's and each round's diff with
// syntax colouring and review comments sent as the next round, its pipeline, and the actions
// (cancel, merge, approve, reject, transfer, fix) under the viewer's token.

import { html, useState, useEffect, useMemo, useRef } from "./preact-htm.js";
import hljs from "./highlight.js";
import { api, follow, money, count, statusOf, session } from "./app.js";
import { TaskConflicts } from "./land_view.js";

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
export function parseDiff(text) {
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
    <${TaskConflicts} slug=${slug} board=${board} />
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
