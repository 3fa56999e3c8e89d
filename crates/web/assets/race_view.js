// The dashboard's races (docs/races.md): the list of races, a form that starts one (in the
// background, `"detach": true`, as the token's commander), and a race's attempts side by side
// (status, checks, diff size and the diff, pairs won and lost, cost, tokens, time), the
// judges' verdicts with their reasons, and the winner with the rule that decided. Every attempt
// and judge of race SLUG is a task of the fleet `race:SLUG`, so the live board (/api/events)
// names the races, and the race's report (/api/races/SLUG) is read again whenever the board
// changes one of its tasks or journals its end.

import { html, useState, useEffect } from "./preact-htm.js";
import { api, money, count, statusOf, useCoalesced } from "./app.js";
import { parseDiff } from "./task_view.js";

const FLEET = "race:";
const JUDGE = /\.j\d+v\d+$/;
// An attempt's diff is shown up to this many lines; the task's own view has the rest.
const DIFF_LINES = 400;

// The races on the board: each race's name and its attempts' rows (judges left out).
function racesOn(board) {
  const races = new Map();
  for (const task of board.tasks.values()) {
    if (!task.fleet || !task.fleet.startsWith(FLEET)) continue;
    const name = task.fleet.slice(FLEET.length);
    if (!races.has(name)) races.set(name, []);
    if (!JUDGE.test(task.slug)) races.get(name).push(task);
  }
  return [...races.entries()].sort(([a], [b]) => a.localeCompare(b));
}

// Starts a race in the background and opens its page.
function RaceForm() {
  const [form, setForm] = useState({ slug: "", message: "", attempts: "", check: "", first_green: false });
  const [error, setError] = useState(null);
  const field = (name) => (e) => setForm((f) => ({ ...f, [name]: e.target.type === "checkbox" ? e.target.checked : e.target.value }));
  const start = async (e) => {
    e.preventDefault();
    const check = form.check.trim();
    try {
      const report = await api("/api/races", { method: "POST", body: {
        slug: form.slug.trim(), message: form.message, attempts: form.attempts.trim(),
        checks: check ? [check] : [], first_green: form.first_green, detach: true } });
      location.hash = `#/race/${encodeURIComponent(report.race)}`;
    } catch (failed) {
      setError(failed.message);
    }
  };
  return html`<details class="start" open><summary>Start a race</summary>
    <form onSubmit=${start}>
      <input id="race-slug" placeholder="slug (the attempts are SLUG.1, SLUG.2, ...)" value=${form.slug} onInput=${field("slug")} />
      <textarea id="race-message" placeholder="the brief every attempt gets" value=${form.message} onInput=${field("message")} />
      <input id="race-attempts" placeholder="attempts: AGENT[:MODEL][*COUNT], e.g. opencode*2,claude" value=${form.attempts} onInput=${field("attempts")} />
      <input id="race-check" placeholder="a check to run on each attempt (optional; the repository's run too)" value=${form.check} onInput=${field("check")} />
      <label><input id="race-first-green" type="checkbox" checked=${form.first_green} onChange=${field("first_green")} /> the first attempt to pass wins (--first-green)</label>
      <button id="race-button" type="submit">Start the race</button>
      ${error ? html`<p class="error-banner" id="race-error">${error}</p>` : ""}
    </form></details>`;
}

export function RacesView({ board }) {
  const races = racesOn(board);
  return html`<section id="races"><h2>Races</h2>
    <${RaceForm} />
    ${races.length === 0 ? html`<p class="muted">No race: <code>ganger race SLUG --message TEXT --attempts SPEC</code>.</p>` : ""}
    <table class="tasks"><thead><tr><th>race</th><th>attempts</th></tr></thead>
    <tbody>${races.map(([name, attempts]) => html`<tr>
      <td><a data-race=${name} href=${`#/race/${encodeURIComponent(name)}`}>${name}</a></td>
      <td>${attempts.sort((a, b) => a.slug.localeCompare(b.slug)).map((t) =>
        html`<span class=${`badge s-${statusOf(t)}`}>${t.slug} ${statusOf(t)}</span> `)}</td>
    </tr>`)}</tbody></table></section>`;
}

// What changes the race's report: the race, its tasks' rows and its end in the journal.
function raceKey(board, slug) {
  const rows = [...board.tasks.values()].filter((t) => t.fleet === `${FLEET}${slug}`)
    .map((t) => `${t.slug}:${statusOf(t)}:${t.rounds}`).sort();
  const ends = board.journal.filter((e) => e.kind === "race-ended").length;
  return `${slug}|${rows.join(",")}|${ends}`;
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function checksText(checks) {
  if (checks.length === 0) return "no checks";
  return checks.map((c) => `${c.name} ${c.passed === null ? "not run" : c.passed ? "pass" : "fail"}`).join(", ");
}

// An attempt's diff against its base, read again when its status or rounds change.
function AttemptDiff({ task, status, rounds }) {
  const [text, setText] = useState(null);
  useEffect(() => {
    if (status === "not-started") return;
    api(`/api/tasks/${encodeURIComponent(task)}/diff`).then(setText).catch(() => setText(null));
  }, [task, status, rounds]);
  if (!text) return html`<p class="muted">No changes yet.</p>`;
  const files = parseDiff(text);
  let left = DIFF_LINES;
  return html`<div class="diff">${files.map((file) => {
    const lines = file.lines.slice(0, Math.max(0, left));
    left -= lines.length;
    return html`<div class="diff-file"><h4>${file.path}</h4><table>
      ${lines.map((l) => html`<tr class=${`diff-line d-${l.kind}`}><td class="ln">${l.line ?? ""}</td>
        <td class="sign">${l.kind === "add" ? "+" : l.kind === "del" ? "-" : ""}</td><td class="code">${l.text}</td></tr>`)}
    </table>${lines.length < file.lines.length ? html`<p class="muted">… the rest in <a href=${`#/task/${encodeURIComponent(task)}`}>${task}</a></p>` : ""}</div>`;
  })}</div>`;
}

function Attempt({ attempt, winner }) {
  const a = attempt;
  return html`<div class=${`attempt${winner ? " winner" : ""}`} data-task=${a.task} data-status=${a.status}>
    <h3><a href=${`#/task/${encodeURIComponent(a.task)}`}>${a.task}</a>${" "}<span class=${`badge s-${a.status}`}>${a.status}</span>${winner ? html` <span class="badge s-done">winner</span>` : ""}</h3>
    <p class="facts">${a.agent}, ${a.model || "its default model"}</p>
    <p class="attempt-checks">${checksText(a.checks)}</p>
    <p class="attempt-size">${plural(a.files, "file")}, +${a.added}/-${a.removed}</p>
    <p class="attempt-record">${a.wins} won, ${a.losses} lost, ${a.ties} tied</p>
    <p class="attempt-spend">${plural(a.rounds, "round")}, ${money(a.cost_usd)}, ${count(a.tokens)} tokens, ${a.seconds.toFixed(1)} s</p>
    ${a.reason ? html`<p class="error-banner">${a.reason}</p>` : ""}
    <${AttemptDiff} task=${a.task} status=${a.status} rounds=${a.rounds} />
  </div>`;
}

function Verdict({ v }) {
  return html`<li class="verdict">${v.a} (A) v ${v.b} (B): WINNER ${v.side}${v.winner ? `, attempt ${v.winner}` : ""}
    ${v.reasons ? html`<span class="reasons"> — ${v.reasons}</span>` : ""}</li>`;
}

export function RaceView({ slug, board }) {
  const [found, error] = useCoalesced(() => api(`/api/races/${encodeURIComponent(slug)}`), raceKey(board, slug));
  // A report of the race asked for: another's, read before the address changed, is not shown.
  const report = found && found.race === slug ? found : null;
  if (!report) {
    return html`<section id="race-loading"><h2>Race ${slug}</h2>
      ${error ? html`<p class="error-banner">${error}</p>` : html`<p>Loading…</p>`}</section>`;
  }
  const ended = report.status !== "running";
  return html`<section id="race" data-status=${report.status}>
    <h2>Race ${report.race} <span class=${`badge s-${report.status === "won" ? "done" : report.status}`}>${report.status}</span></h2>
    <p class="facts">${report.spec}; owner ${report.owner}${report.first_green ? "; --first-green" : ""}</p>
    ${error ? html`<p class="error-banner">${error}</p>` : ""}
    ${ended ? html`<div class="race-end">
      <p id="race-winner">${report.winner_task ? `winner: ${report.winner_task} (attempt ${report.winner})` : "no winner"}</p>
      <p id="race-rule">rule: ${report.rule_text || report.rule || "none"}</p></div>` : html`<p class="muted">Running: the winner is chosen once every attempt has ended.</p>`}
    <div class="attempts">${report.attempts.map((a) => html`<${Attempt} key=${a.task} attempt=${a} winner=${report.winner === a.number} />`)}</div>
    <h3>Reviews (A shown first)</h3>
    ${report.verdicts.length === 0 ? html`<p class="muted">No verdict yet.</p>` : ""}
    <ul class="verdicts">${report.verdicts.map((v) => html`<${Verdict} v=${v} />`)}</ul>
  </section>`;
}
