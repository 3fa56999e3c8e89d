//! A repository for fleet tests: two agents that call a fake model server (the `command`
//! agent running a shell worker, and the stand-in `opencode` behind a wrapper that calls the
//! server first), witnesses kept outside ganger (the server's request log and in-flight
//! counts, a file per task the workers write), and a fleet file writer.

#![allow(dead_code, reason = "each test module uses part of it")]

use ganger_fake_llm::{FakeLlm, Script};
use ganger_test_support::World;
use std::path::{Path, PathBuf};

/// The worker both agents run: one model request for the task (named by its worktree), held
/// by the server for `WORKER_DELAY_MS`, with witnesses before and after.
const WORKER: &str = r#"#!/bin/bash
set -u
model="$1"
cat > /dev/null
slug=${PWD##*/repo-agent-}
now() { date +%s%N; }
echo "start $(now)" >> "$WITNESS_DIR/$slug.log"
code=$(curl -s -o /dev/null -w '%{http_code}' \
  -H 'content-type: application/json' -H "x-ganger-task: $slug" \
  -H "x-fake-delay-ms: ${WORKER_DELAY_MS:-0}" \
  -d "{\"model\":\"$model\",\"messages\":[{\"role\":\"user\",\"content\":\"work on $slug\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"noop\",\"parameters\":{\"type\":\"object\"}}}]}" \
  "$LLM_URL/chat/completions")
echo "end $(now) $code" >> "$WITNESS_DIR/$slug.log"
if [ "$code" = 429 ]; then echo "error: HTTP 429 Too Many Requests from the model"; exit 1; fi
if [ "$code" != 200 ]; then echo "error: HTTP $code"; exit 1; fi
echo "DONE: $slug finished"
"#;

/// The stand-in `opencode`, calling the server first with the model it is given.
const OPENCODE_WRAPPER: &str = r#"#!/bin/bash
set -u
if [ "${1:-}" != run ]; then exec "$FAKE_OPENCODE" "$@"; fi
model=mock/scripted
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in --model|-m) model=${args[$((i + 1))]} ;; esac
done
prompt=$(cat)
printf '%s' "$prompt" | "$WORKER" "$model" > /dev/null || exit 1
printf '%s' "$prompt" | exec "$FAKE_OPENCODE" "$@"
"#;

/// A fleet test's world.
pub struct FleetWorld {
    pub world: World,
    pub llm: FakeLlm,
    pub witness: PathBuf,
}

fn write_executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

impl FleetWorld {
    /// A repository whose `ganger.toml` configures both agents against a new fake model
    /// server answering with `script`; each model request is held `delay_ms`.
    pub fn new(script: Script, delay_ms: u64) -> FleetWorld {
        let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
        let llm = FakeLlm::start(script).unwrap();
        let witness = world.root().join("witness");
        std::fs::create_dir_all(&witness).unwrap();
        let worker = world.root().join("worker.sh");
        write_executable(&worker, WORKER);
        let fake = ganger_test_support::write_fake_opencode(world.root());
        let wrapper = world.root().join("opencode-llm");
        write_executable(&wrapper, OPENCODE_WRAPPER);
        let env = format!(
            "{{ LLM_URL = {url:?}, WITNESS_DIR = {witness:?}, WORKER_DELAY_MS = \"{delay_ms}\", WORKER = {worker:?}, FAKE_OPENCODE = {fake:?} }}",
            url = llm.base_url(),
            witness = witness.to_string_lossy(),
            worker = worker.to_string_lossy(),
            fake = fake.to_string_lossy(),
        );
        world.write(
            "ganger.toml",
            &format!(
                "[defaults]\nagent = \"command\"\nmodel = \"mock/scripted\"\ntimeout = \"120s\"\n\n\
                 [agents.command]\nargv = [{worker:?}, \"{{model}}\"]\nformat = \"text\"\nenv = {env}\n\n\
                 [agents.opencode]\ncommand = {wrapper:?}\nenv = {env}\n\n\
                 [warm]\ndefault = false\n",
                worker = worker.to_string_lossy(),
                wrapper = wrapper.to_string_lossy(),
            ),
        );
        FleetWorld {
            world,
            llm,
            witness,
        }
    }

    /// Writes a fleet file and returns its path.
    pub fn fleet_file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.world.root().join(format!("{name}.toml"));
        std::fs::write(&path, text).unwrap();
        path
    }

    /// (start, end) of each run of task `slug`'s worker, in ns, from its witness file.
    pub fn runs(&self, slug: &str) -> Vec<(u128, u128)> {
        let text =
            std::fs::read_to_string(self.witness.join(format!("{slug}.log"))).unwrap_or_default();
        let mut runs = Vec::new();
        let mut start = None;
        for line in text.lines() {
            let mut words = line.split(' ');
            match (
                words.next(),
                words.next().and_then(|t| t.parse::<u128>().ok()),
            ) {
                (Some("start"), Some(t)) => start = Some(t),
                (Some("end"), Some(t)) => {
                    runs.push((start.take().unwrap_or(0), t));
                }
                _ => {}
            }
        }
        runs
    }

    /// Holds that each task of `slugs` ran its worker once and that no two of those runs
    /// overlapped (a limit of one round at a time held them all).
    pub fn ran_once_one_at_a_time<S: AsRef<str>>(&self, slugs: &[S]) {
        let mut runs: Vec<(u128, u128)> = slugs
            .iter()
            .flat_map(|slug| {
                let runs = self.runs(slug.as_ref());
                assert_eq!(runs.len(), 1, "{} ran {} times", slug.as_ref(), runs.len());
                runs
            })
            .collect();
        runs.sort();
        assert!(
            runs.windows(2).all(|w| w[1].0 >= w[0].1),
            "rounds overlapped: {runs:?}"
        );
    }

    /// (slug, kind, state, reason) of every queue row, by id, read from the database itself;
    /// none before any ganger made the database (a serve just started may not have yet).
    pub fn queue_rows(&self) -> Vec<(String, String, String, Option<String>)> {
        let path = self.world.repo.join(".ganger/state.db");
        if !path.exists() {
            return Vec::new();
        }
        let db = rusqlite::Connection::open_with_flags(
            &path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        let made: bool = db
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'queue')",
                [],
                |row| row.get(0),
            )
            .unwrap();
        if !made {
            return Vec::new();
        }
        let mut statement = db
            .prepare("SELECT slug, kind, state, reason FROM queue ORDER BY id")
            .unwrap();
        statement
            .query_map([], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// The queue's rows once no item is open or being followed any more (`serve` marks an
    /// item ended when it sees its round's end, a moment after the round's own record), or
    /// as they are after 30 s.
    pub fn settled_queue_rows(&self) -> Vec<(String, String, String, Option<String>)> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let rows = self.queue_rows();
            let open = rows
                .iter()
                .any(|r| ["queued", "delivering", "delivered"].contains(&r.2.as_str()));
            if !open || std::time::Instant::now() > deadline {
                return rows;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// How many model requests the server saw for each task.
    pub fn requests_per_task(&self) -> std::collections::BTreeMap<String, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for request in self.llm.requests() {
            if let Some(task) = request.task() {
                *counts.entry(task.to_owned()).or_default() += 1;
            }
        }
        counts
    }
}
