//! `--metrics` of `ganger worker` and `ganger serve` (issue 44, operations): the Prometheus
//! text scraped over HTTP says what `status --json` and `fleet status --json` say of a fleet
//! a worker drained (the queue by state, the rounds by agent and status, their durations
//! counted, the worker's claim held), on SQLite and PostgreSQL; the health check is red with
//! the cause while the private PostgreSQL cluster is stopped and green once it is back, and
//! red while serve's scheduler has lost its claim in the store.

use crate::workers::{fleet, ganger};
use ganger_test_support::{PgDatabase, PrivateCluster, World, wait_until};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Child;
use std::time::Duration;

/// A `ganger worker` or `ganger serve` with `--metrics 127.0.0.1:0`, killed when dropped.
struct Daemon {
    child: Child,
    log: PathBuf,
}

impl Daemon {
    fn start(world: &World, store: Option<&str>, args: &[&str]) -> Daemon {
        Daemon::start_with(world, store, args, &[])
    }

    /// [`Daemon::start`] with `envs` in its environment.
    #[expect(
        clippy::disallowed_methods,
        reason = "the daemon is ganger itself, run in the background as a user runs it"
    )]
    fn start_with(
        world: &World,
        store: Option<&str>,
        args: &[&str],
        envs: &[(&str, &str)],
    ) -> Daemon {
        let log = world.root().join(format!("{}.log", args[0]));
        let mut all = args.to_vec();
        all.extend_from_slice(&["--metrics", "127.0.0.1:0"]);
        let mut command = world.command(&all);
        if let Some(url) = store {
            command.env("GANGER_STORE", url);
        }
        command.envs(envs.iter().copied());
        let child = command
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
            .spawn()
            .unwrap();
        Daemon { child, log }
    }

    /// What it printed, on stdout then stderr.
    fn log_text(&self) -> String {
        let read = |path: &std::path::Path| std::fs::read_to_string(path).unwrap_or_default();
        read(&self.log) + &read(&self.log.with_extension("err"))
    }

    /// `http://ADDRESS` of its metrics listener, once it says where it is.
    fn metrics_base(&mut self) -> String {
        let mut base = None;
        assert!(
            wait_until(Duration::from_secs(60), || {
                if let Ok(Some(ended)) = self.child.try_wait() {
                    panic!("it ended ({ended}):\n{}", self.log_text());
                }
                base = self.log_text().lines().find_map(|line| {
                    let (_, url) = line.split_once("metrics at ")?;
                    Some(url.trim().strip_suffix("/metrics")?.to_owned())
                });
                base.is_some()
            }),
            "no metrics address in:\n{}",
            self.log_text()
        );
        base.unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET url`: its status and body.
pub(crate) fn get(url: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let response = agent.get(url).call().unwrap();
    let status = response.status().as_u16();
    (status, response.into_body().read_to_string().unwrap())
}

/// The samples of a Prometheus text exposition, by `name{labels}` as written. Every family's
/// `# TYPE` comes before its samples, once.
pub(crate) fn samples(text: &str) -> BTreeMap<String, f64> {
    let mut typed = Vec::new();
    let mut samples = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let name = rest.split(' ').next().unwrap().to_owned();
            assert!(!typed.contains(&name), "{name} typed twice:\n{text}");
            typed.push(name);
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (key, value) = line.rsplit_once(' ').unwrap();
        let family = key.split('{').next().unwrap();
        assert!(
            typed.iter().any(|name| family.starts_with(name.as_str())),
            "{family} has no # TYPE before it:\n{text}"
        );
        let value = match value {
            "+Inf" => f64::INFINITY,
            value => value.parse().unwrap(),
        };
        assert!(
            samples.insert(key.to_owned(), value).is_none(),
            "{key} twice"
        );
    }
    samples
}

/// A world whose agent fails on a message that says `fail` and is done otherwise, with
/// fleet `f` of `slugs` submitted.
fn world_with_fleet(store: Option<&str>, slugs: &[&str]) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "if grep -q fail; then echo 'it broke' >&2; exit 3; fi; sleep 1; echo 'DONE: ok'",
        "",
        "",
    );
    let text: String = slugs
        .iter()
        .map(|slug| format!("[[task]]\nslug = \"{slug}\"\nmessage = \"do {slug}\"\n"))
        .collect();
    let file = world.root().join("f.toml");
    std::fs::write(&file, text).unwrap();
    ganger(&world, store, &["fleet", "submit", file.to_str().unwrap()]).expect_code(0);
    world
}

fn scraped_metrics_agree_with_status(store: Option<&str>) {
    let slugs = ["ok-1", "ok-2", "ok-3", "fail-1", "fail-2"];
    let world = world_with_fleet(store, &slugs);
    let mut worker = Daemon::start(&world, store, &["worker", "--name", "w", "--capacity", "3"]);
    let base = worker.metrics_base();
    assert!(
        wait_until(Duration::from_secs(120), || {
            fleet(&world, store)["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|task| task["queue"] == "ended")
        }),
        "{:#}\n{}",
        fleet(&world, store),
        worker.log_text()
    );
    let (status, text) = get(&format!("{base}/metrics"));
    assert_eq!(status, 200, "{text}");
    let scraped = samples(&text);
    let metric = |key: &str| scraped.get(key).copied().unwrap_or(0.0);

    // The queue by state, as `fleet status` has it.
    let fleet = fleet(&world, store);
    let mut queue: BTreeMap<String, f64> = BTreeMap::new();
    for task in fleet["tasks"].as_array().unwrap() {
        *queue
            .entry(task["queue"].as_str().unwrap().to_owned())
            .or_default() += 1.0;
    }
    for state in [
        "queued",
        "delivering",
        "delivered",
        "ended",
        "refused",
        "stale",
    ] {
        let key = format!("ganger_queue_items{{state=\"{state}\"}}");
        assert!(scraped.contains_key(&key), "{key} missing:\n{text}");
        assert_eq!(
            metric(&key),
            queue.get(state).copied().unwrap_or(0.0),
            "{key}\n{text}\n{fleet:#}"
        );
    }

    // The rounds by agent and status, as `status` has them (one round each).
    let listed = ganger(&world, store, &["status", "--json"]).json();
    let mut rounds: BTreeMap<String, f64> = BTreeMap::new();
    let mut by_agent: BTreeMap<String, f64> = BTreeMap::new();
    for task in listed["tasks"].as_array().unwrap() {
        assert_eq!(task["rounds"], 1, "{task:#}");
        let agent = task["agent"].as_str().unwrap();
        let key = format!(
            "ganger_rounds_finished_total{{agent=\"{agent}\",status=\"{}\"}}",
            task["last_status"].as_str().unwrap()
        );
        *rounds.entry(key).or_default() += 1.0;
        *by_agent.entry(agent.to_owned()).or_default() += 1.0;
    }
    let finished: BTreeMap<String, f64> = scraped
        .iter()
        .filter(|(key, _)| key.starts_with("ganger_rounds_finished_total"))
        .map(|(key, value)| (key.clone(), *value))
        .collect();
    assert_eq!(finished, rounds, "{text}\n{listed:#}");
    assert_eq!(rounds.len(), 2, "done and failed both: {rounds:?}");
    for (agent, n) in &by_agent {
        let count = format!("ganger_round_duration_seconds_count{{agent=\"{agent}\"}}");
        assert_eq!(metric(&count), *n, "{text}");
        let inf = format!("ganger_round_duration_seconds_bucket{{agent=\"{agent}\",le=\"+Inf\"}}");
        assert_eq!(metric(&inf), *n, "{text}");
        // The three done rounds slept a second: the sum says so.
        let sum = format!("ganger_round_duration_seconds_sum{{agent=\"{agent}\"}}");
        assert!(metric(&sum) >= 3.0, "{text}");
        let running = format!("ganger_rounds_running{{agent=\"{agent}\"}}");
        assert_eq!(metric(&running), 0.0, "{text}");
    }

    // The worker's claim is held, with nothing under it now, and no fleet names a remote to
    // push to; the store answered.
    assert_eq!(metric("ganger_claim_held"), 1.0, "{text}");
    assert_eq!(metric("ganger_claim_items_held"), 0.0, "{text}");
    assert_eq!(metric("ganger_pushes_pending"), 0.0, "{text}");
    assert_eq!(metric("ganger_store_up"), 1.0, "{text}");
    assert!(metric("ganger_store_ping_seconds_count") >= 1.0, "{text}");
    assert_eq!(get(&format!("{base}/healthz")), (200, "ok\n".to_owned()));
    assert_eq!(get(&format!("{base}/nothing")).0, 404);
}

#[test]
fn scraped_metrics_agree_with_status_on_sqlite() {
    scraped_metrics_agree_with_status(None);
}

#[test]
fn scraped_metrics_agree_with_status_on_postgres() {
    let Some(db) = PgDatabase::new() else { return };
    scraped_metrics_agree_with_status(Some(&db.url));
}

/// `ganger serve --metrics` scrapes the same store: the queue it has not yet run, counted.
#[test]
fn serve_counts_the_queue_it_is_given() {
    let world = world_with_fleet(None, &["ok-1", "ok-2"]);
    let mut serve = Daemon::start(&world, None, &["serve", "--max", "1"]);
    let base = serve.metrics_base();
    let (status, text) = get(&format!("{base}/metrics"));
    assert_eq!(status, 200, "{text}");
    let scraped = samples(&text);
    let open: f64 = ["queued", "delivering", "delivered", "ended"]
        .iter()
        .map(|state| scraped[&format!("ganger_queue_items{{state=\"{state}\"}}")])
        .sum();
    assert_eq!(open, 2.0, "{text}");
    // serve's scheduler holds a claim of its own, with at most its --max under it.
    assert_eq!(scraped["ganger_claim_held"], 1.0, "{text}");
    assert!(scraped["ganger_claim_items_held"] <= 1.0, "{text}");
    assert_eq!(get(&format!("{base}/health")), (200, "ok\n".to_owned()));
}

/// The health check is red, naming the store, while the database is stopped, and green
/// again once it is back (within the worker's lease, so its claim still holds).
#[test]
fn health_is_red_while_the_database_is_stopped_and_green_after() {
    let Some(cluster) = PrivateCluster::start("health") else {
        return;
    };
    let store = Some(cluster.url.as_str());
    let world = world_with_fleet(store, &["ok-1"]);
    let mut worker = Daemon::start(&world, store, &["worker", "--name", "w"]);
    let base = worker.metrics_base();
    let health = format!("{base}/healthz");
    assert_eq!(
        get(&health),
        (200, "ok\n".to_owned()),
        "{}",
        worker.log_text()
    );
    cluster.pg_ctl(&["stop", "-m", "immediate", "-w"]);
    let (status, cause) = get(&health);
    assert_eq!(status, 503, "{cause}");
    assert!(cause.contains("store"), "{cause}");
    let scraped = samples(&get(&format!("{base}/metrics")).1);
    assert_eq!(scraped["ganger_store_up"], 0.0);
    cluster.pg_ctl(&["start", "-w"]);
    assert!(
        wait_until(Duration::from_secs(40), || get(&health).0 == 200),
        "{:?}\n{}",
        get(&health),
        worker.log_text()
    );
    assert_eq!(get(&health), (200, "ok\n".to_owned()));
}

/// serve's health check watches its scheduler's claim: once the store no longer holds it (its
/// lease run out, as it does when serve is cut off from the database for longer than the
/// lease), the check is red naming the claim while serve lives; serve then stops, exit 70,
/// and the next serve, with a claim of its own, is green. The fault pause keeps the one that
/// lost its claim alive long enough to be asked, however loaded the machine.
#[test]
fn serve_health_is_red_once_its_claim_is_lost_and_green_for_the_next_serve() {
    let Some(db) = PgDatabase::new() else { return };
    let store = Some(db.url.as_str());
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("echo 'DONE: ok'", "", "");
    let pause = [("GANGER_FAULT_PAUSE", "scheduler-claim-lost:20000")];
    let mut serve = Daemon::start_with(&world, store, &["serve", "--max", "1"], &pause);
    let health = format!("{}/healthz", serve.metrics_base());
    assert_eq!(
        get(&health),
        (200, "ok\n".to_owned()),
        "{}",
        serve.log_text()
    );

    let mut client = db.client();
    let ran_out = client
        .execute(
            "UPDATE leases SET expires_at = now() - interval '1 second' \
             WHERE name LIKE 'scheduler-%'",
            &[],
        )
        .unwrap();
    assert_eq!(ran_out, 1, "serve's scheduler holds one lease");
    let (status, cause) = get(&health);
    assert_eq!(status, 503, "{cause}\n{}", serve.log_text());
    assert!(cause.contains("claim in the store (scheduler-"), "{cause}");
    let scraped = samples(&get(&health.replace("/healthz", "/metrics")).1);
    assert_eq!(scraped["ganger_claim_held"], 0.0);
    assert_eq!(scraped["ganger_store_up"], 1.0);

    let mut ended = None;
    assert!(
        wait_until(Duration::from_secs(120), || {
            ended = serve.child.try_wait().unwrap();
            ended.is_some()
        }),
        "serve lives on without its claim:\n{}",
        serve.log_text()
    );
    assert_eq!(ended.unwrap().code(), Some(70), "{}", serve.log_text());
    assert!(serve.log_text().contains("claim in the store ran out"));

    let mut next = Daemon::start(&world, store, &["serve", "--max", "1"]);
    let health = format!("{}/healthz", next.metrics_base());
    assert_eq!(
        get(&health),
        (200, "ok\n".to_owned()),
        "{}",
        next.log_text()
    );
}

/// The metrics listener is bounded as the API's is (`connections.rs`): a client that connects
/// and sends no request is let go once the time to send headers (10 s) is over, and a request
/// body past 2 MB is refused from its declared length, unread.
#[test]
fn the_metrics_listener_lets_a_silent_client_go_and_refuses_a_big_body() {
    use std::io::{Read, Write};
    let world = world_with_fleet(None, &["ok-1"]);
    let mut serve = Daemon::start(&world, None, &["serve", "--max", "1"]);
    let base = serve.metrics_base();
    let address = base.strip_prefix("http://").unwrap();
    let mut big = std::net::TcpStream::connect(address).unwrap();
    big.write_all(
        format!(
            "POST /metrics HTTP/1.1\r\nhost: {address}\r\ncontent-length: {}\r\n\r\n",
            3 * 1024 * 1024
        )
        .as_bytes(),
    )
    .unwrap();
    big.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut answer = [0u8; 64];
    let n = big.read(&mut answer).unwrap();
    let head = String::from_utf8_lossy(&answer[..n]).into_owned();
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");

    let mut silent = std::net::TcpStream::connect(address).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let began = std::time::Instant::now();
    let mut rest = Vec::new();
    let _ = silent.read_to_end(&mut rest);
    let held = began.elapsed();
    assert!(
        held >= Duration::from_secs(9) && held < Duration::from_secs(25),
        "let go after {held:?}: {}",
        String::from_utf8_lossy(&rest)
    );
}
