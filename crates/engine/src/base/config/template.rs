//! The commented `ganger.toml` that `ganger init` writes when there is none. Every setting is
//! shown with its default, commented out where the default is "unset". What concerns the agents
//! (the default one, their names, examples of their tables) comes from the agents crate.

/// The template.
pub fn template() -> String {
    let agent = format!("agent = \"{}\"", ganger_agents::DEFAULT_AGENT);
    format!(
        "{BEFORE_AGENT}{agent:<24}# the agent of new tasks (--agent): {}\n{AFTER_AGENT}{}{AFTER_AGENTS}",
        ganger_agents::names().join(", "),
        ganger_agents::SETTINGS_TEMPLATE,
    )
}

/// Up to the default agent's line.
const BEFORE_AGENT: &str = r#"# ganger.toml: how ganger runs agents on this repository. Commit it.
# Per-user settings (key file locations, your own defaults) go in ~/.config/ganger/config.toml,
# which this file overrides key by key. Durations read 90, "90s", "10m", "2h".

[defaults]
"#;

/// From after the default agent's line up to the agents' tables.
const AFTER_AGENT: &str = r#"permission = "write"    # what agents may do (--permission): write, or read-only
# model = "provider/model"   # the model of new tasks (-m); unset: the agent's own default
base = "main"           # the revision new worktrees start from (--base)
timeout = "60m"         # wall-clock limit of a round (--timeout)
stall = "10m"           # a round with no new event and no process activity this long is stopped
grace = "10s"           # between SIGTERM and SIGKILL when a round is stopped
models_cache = "24h"    # how long a cached list of an agent's models is trusted

[worktree]
path = "../{repo}-agent-{slug}"   # relative to this checkout; {repo} is its directory name
branch = "agent/{slug}"

[keys]
# Environment variable that carries each provider's key (--key PROVIDER=FILE).
# Unlisted providers use <PROVIDER>_API_KEY.
# openrouter = "OPENROUTER_API_KEY"

[sandbox]
default = "local"       # where rounds run (--sandbox): local, bwrap or docker
network = "gateway"     # sandboxed rounds' network (--network): gateway (only the model
                        # gateway: the model, and `allow` through its proxy), shared, or none
allow = []              # HOST:PORT a gateway round may reach besides its model (--allow adds)
cgroup = true           # give each round a cgroup of its own where the system allows
read_only = []          # paths in the worktree the agent may read, not change (bwrap, docker)
rw = []                 # paths under read_only ones that stay writable (--rw adds to them)

[sandbox.docker]
network = "host"        # the Docker network of a shared round; host reaches a model on loopback
# memory = "4g"         # per round's container
# cpus = 2.0
pids = 4096
suite = "trixie"        # Debian release of worker images (ganger image build)
packages = []           # Debian packages the project's checks need, added to worker images
# mirror = "http://deb.debian.org/debian"
# image = "my-worker:1" # use this image instead of the one ganger image build names

"#;

/// After the agents' tables.
const AFTER_AGENTS: &str = r#"
# Checks: run after every round in the task's worktree, in its sandbox; a round whose checks
# fail is not done, whatever the agent said (--until-green N sends the failures back to it).
# [[checks]]
# name = "tests"
# command = "cargo test --quiet"
# timeout = "10m"

# The role pipeline (ganger plan, approve, reject: docs/pipeline.md).
[pipeline]
reviewers = ["code", "tests"]   # in order; built in: tests, code, docs, security, or a role you add
review_rounds = 3       # review rounds (every reviewer, then a fix) before the pipeline stops
fix_rounds = 2          # fix rounds of a step whose round or checks fail
retries = 3             # retries of a round that failed transiently (HTTP 429, 5xx)
backoff = "5s"          # the first wait before a retry, doubled each time

# A role: agent, model, effort, permission (read-only but for the executor), prompt (a file
# of this repository with its instructions; unset: ganger's built-in ones). Unset: the task's.
# Roles: planner, critic, executor, tests, code, docs, security, and any you add.
# [roles.planner]
# model = "provider/strong-model"        # strong models plan
# prompt = "roles/planner.md"
# [roles.executor]
# model = "provider/cheap-model"         # cheap models execute

# Prices in US dollars per million tokens, for agents that report no cost of their own.
# [prices."gpt-5.5"]
# input = 1.25
# output = 10.0
# cache_read = 0.125

# The store: .ganger/state.db (SQLite) unless a PostgreSQL database is named here, by
# GANGER_STORE or by --store (which outrank this). Keep a URL with a password out of a
# committed ganger.toml: put it in ~/.config/ganger/config.toml or the environment, or
# better, name a file holding the password alone (mode 0600; else PGPASSWORD or ~/.pgpass).
# [store]
# url = "postgres://ganger@db.example:5432/ganger?sslmode=verify-full&sslrootcert=/etc/ganger/db-ca.crt"
# password_file = "/etc/ganger/db-password"

# [land]
# mode = "merge"           # or "rebase": ganger land puts one checked commit per task, no merge

# [fleet]
# conflicts = "warn"       # or "serialize": a queued round of a task predicted to conflict
#                          # with one running or queued to land waits until it has landed

[gateway]               # the model gateway holds the model's --key; the agent gets a placeholder
enabled = true          # false: the agent gets the key in its environment (docs/gateway.md)
# ca = "certs/models-ca.pem"   # certificates trusted for the model's endpoint besides the system's
"#;
