//! TLS to a PostgreSQL store (issue 44): `sslmode` and `sslrootcert` as libpq reads them, in a
//! URL's query and in the key-value form. The test server (`scripts/postgres-cluster`) offers
//! TLS with a certificate its test CA signed for 127.0.0.1 and localhost, and takes plain
//! connections as before. `verify-full` with that CA runs a round over TLS; a CA that signed
//! nothing of the server's, a name the certificate is not for, a root file that is not there:
//! exit 70, naming TLS. `require` against a server without TLS says so.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{PgDatabase as Database, World, wait_until};
use std::io::{Read, Write};
use std::time::Duration;

fn ganger(world: &World, store: &str, args: &[&str]) -> ganger_test_support::Run {
    let mut command = world.command(args);
    command.env("GANGER_STORE", store);
    ganger_test_support::Run::from(command.output().unwrap())
}

/// `url` with `params` added to its query.
fn with(url: &str, params: &str) -> String {
    format!("{url}?{params}")
}

/// The parts of the test database's URL, `postgres://USER:PASSWORD@HOST:PORT/DB`.
pub(crate) fn parts(url: &str) -> (String, String, String, String) {
    let rest = url.strip_prefix("postgres://").unwrap();
    let (user_info, rest) = rest.split_once('@').unwrap();
    let (user, password) = user_info.split_once(':').unwrap();
    let (address, db) = rest.split_once('/').unwrap();
    let port = address.rsplit_once(':').unwrap().1;
    (user.into(), password.into(), port.into(), db.into())
}

#[test]
fn a_round_runs_and_status_answers_over_verify_full_tls_with_the_test_ca() {
    let Some(db) = Database::new() else { return };
    let roots = db.tls_roots();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; sleep 4; echo 'DONE: ok'", "", "");
    let store = with(
        &db.url,
        &format!("sslmode=verify-full&sslrootcert={}", roots.ca.display()),
    );
    ganger(
        &world,
        &store,
        &["start", "tls", "--message", "Hi.", "--detach"],
    )
    .expect_code(0);
    // The round's host holds its connections while its agent runs: every one is TLS.
    assert!(
        wait_until(Duration::from_secs(10), || {
            let (tls, plain) = db.connections_by_tls();
            tls > 0 && plain == 0
        }),
        "connections (TLS, plain): {:?}",
        db.connections_by_tls()
    );
    let ended = ganger(&world, &store, &["wait", "tls", "--json"]);
    assert_eq!(ended.json()["status"], "done", "{}", ended.stdout);
    let status = ganger(&world, &store, &["status", "--json"]);
    status.expect_code(0);
    assert!(status.stdout.contains("\"tls\""), "{}", status.stdout);
    // The key-value form takes the same keys.
    let (user, password, port, name) = parts(&db.url);
    let key_value = format!(
        "host=localhost port={port} user={user} password={password} dbname={name} \
         sslmode=verify-full sslrootcert='{}'",
        roots.ca.display()
    );
    ganger(&world, &key_value, &["status"]).expect_code(0);
}

#[test]
fn a_certificate_the_roots_do_not_vouch_for_is_an_environment_failure_naming_tls() {
    let Some(db) = Database::new() else { return };
    let roots = db.tls_roots();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let (user, password, port, name) = parts(&db.url);
    // Connected at 127.0.0.1, the certificate checked for the name db.invalid (not its own).
    let elsewhere = |mode: &str, ca: &std::path::Path| {
        format!(
            "host=db.invalid hostaddr=127.0.0.1 port={port} user={user} password={password} \
             dbname={name} sslmode={mode} sslrootcert={}",
            ca.display()
        )
    };
    let refused = [
        with(
            &db.url,
            &format!(
                "sslmode=verify-full&sslrootcert={}",
                roots.other_ca.display()
            ),
        ),
        with(
            &db.url,
            &format!("sslmode=verify-ca&sslrootcert={}", roots.other_ca.display()),
        ),
        elsewhere("verify-full", &roots.ca),
        with(
            &db.url,
            "sslmode=verify-full&sslrootcert=/nonexistent/ca.crt",
        ),
        // The system's roots (verify-full by default with them) know nothing of the test CA.
        with(&db.url, "sslrootcert=system"),
    ];
    for store in &refused {
        let run = ganger(&world, store, &["status"]);
        assert_eq!(run.code, 70, "{store}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains("TLS"), "{store}: {}", run.stderr);
        assert!(!run.stderr.contains(&password), "{}", run.stderr);
    }
    // verify-ca checks the chain, not the name.
    ganger(&world, &elsewhere("verify-ca", &roots.ca), &["status"]).expect_code(0);
    // A mode libpq does not know is bad input.
    let run = ganger(&world, &with(&db.url, "sslmode=verify"), &["status"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("sslmode"), "{}", run.stderr);
    let run = ganger(
        &world,
        &with(&db.url, "sslmode=require&sslrootcert=system"),
        &["status"],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("verify-full"), "{}", run.stderr);
}

/// A server that answers every TLS request with `N` (it has no TLS), then waits.
fn server_without_tls() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut socket in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut request = [0_u8; 8];
                if socket.read_exact(&mut request).is_ok() {
                    let _ = socket.write_all(b"N");
                }
                let mut sink = [0_u8; 1024];
                while socket.read(&mut sink).is_ok_and(|n| n > 0) {}
            });
        }
    });
    port
}

#[test]
fn require_against_a_server_without_tls_fails_saying_so() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let port = server_without_tls();
    let store = format!("postgres://ganger:hunter2secret@127.0.0.1:{port}/db?sslmode=require");
    let run = ganger(&world, &store, &["status"]);
    assert_eq!(run.code, 70, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("server does not support TLS"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("hunter2secret"), "{}", run.stderr);
}

/// `pid` and every process below it.
fn process_tree(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|child| {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).ok()?;
            // The parent is the second field after the command's closing parenthesis.
            let after = &stat[stat.rfind(')')? + 2..];
            Some((child, after.split(' ').nth(1)?.parse().ok()?))
        })
        .collect();
    let mut tree = vec![pid];
    let mut at = 0;
    while at < tree.len() {
        let parent = tree[at];
        tree.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        at += 1;
    }
    tree
}

/// Starts a detached round of task `slug` with `command`, and checks that no process of the
/// round (its host, the agent under it) holds `password` in its command line or environment.
fn round_without_password_in_any_child(
    slug: &str,
    mut command: std::process::Command,
    password: &str,
) {
    // The test's own variable holds the server's password: not ganger's to pass on.
    let started = command
        .env_remove(ganger_test_support::PG_SERVER_ENV)
        .args(["start", slug, "--message", "Hi.", "--detach", "--json"])
        .output()
        .unwrap();
    let started = ganger_test_support::Run::from(started);
    started.expect_code(0);
    let host = u32::try_from(started.json()["host_pid"].as_u64().unwrap()).unwrap();
    // The agent is running under the host (it sleeps): the tree has more than the host.
    assert!(
        wait_until(Duration::from_secs(10), || process_tree(host).len() > 2),
        "{slug}: no agent under the host"
    );
    for pid in process_tree(host) {
        for what in ["cmdline", "environ"] {
            let text = std::fs::read(format!("/proc/{pid}/{what}")).unwrap_or_default();
            let text = String::from_utf8_lossy(&text).replace('\0', " ");
            assert!(
                !text.contains(password),
                "{slug}: /proc/{pid}/{what}: {text}"
            );
        }
    }
}

#[test]
fn the_password_from_pgpassword_a_pgpass_file_or_the_configuration_reaches_no_child() {
    let Some(db) = Database::new() else { return };
    let (user, password, port, name) = parts(&db.url);
    let bare = format!("postgres://{user}@127.0.0.1:{port}/{name}");
    let secrets = tempfile::tempdir().unwrap();
    let private = |file: &str, text: &str, mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        let path = secrets.path().join(file);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    };
    let pgpass = private(
        "pgpass",
        &format!(
            "# ganger's store\nother:{port}:*:{user}:wrong\n127.0.0.1:{port}:{name}:{user}:{password}\n"
        ),
        0o600,
    );
    let password_file = private("store-password", &format!("{password}\n"), 0o600);
    let agent = "cat >/dev/null; sleep 3; echo 'DONE: ok'";
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(agent, "", "");
    let sources: [(&str, &[(&str, &str)]); 3] = [
        ("env", &[("PGPASSWORD", &password)]),
        ("passfile", &[("PGPASSFILE", pgpass.to_str().unwrap())]),
        ("url", &[]),
    ];
    for (slug, env) in sources {
        let mut command = world.command(&[]);
        let store = if slug == "url" {
            db.url.clone()
        } else {
            bare.clone()
        };
        command
            .env("GANGER_STORE", &store)
            .envs(env.iter().copied());
        round_without_password_in_any_child(slug, command, &password);
        let mut wait = world.command(&["wait", slug, "--json"]);
        wait.env("GANGER_STORE", &store).envs(env.iter().copied());
        let ended = ganger_test_support::Run::from(wait.output().unwrap());
        assert_eq!(
            ended.json()["status"],
            "done",
            "{slug}: {}{}",
            ended.stdout,
            ended.stderr
        );
    }
    // The configuration's password file, and a URL over TLS.
    world.use_command_agent(
        agent,
        "",
        &format!(
            "\n[store]\npassword_file = {:?}\n",
            password_file.to_str().unwrap()
        ),
    );
    let tls = format!(
        "{bare}?sslmode=verify-full&sslrootcert={}",
        db.tls_roots().ca.display()
    );
    let mut command = world.command(&[]);
    command.env("GANGER_STORE", &tls);
    round_without_password_in_any_child("configured", command, &password);
    let ended = ganger(&world, &tls, &["wait", "configured", "--json"]);
    assert_eq!(
        ended.json()["status"],
        "done",
        "{}{}",
        ended.stdout,
        ended.stderr
    );
    ganger(&world, &tls, &["status"]).expect_code(0);
    // An agent that prints the password (from its script: ganger gave it none) has it
    // redacted from its log, found in PGPASSWORD as a URL's would be.
    world.use_command_agent(
        &format!("cat >/dev/null; echo 'leaked {password}'; echo 'DONE: ok'"),
        "",
        "",
    );
    let with_env = |args: &[&str]| {
        let mut command = world.command(args);
        command
            .env_remove(ganger_test_support::PG_SERVER_ENV)
            .env("GANGER_STORE", &bare)
            .env("PGPASSWORD", &password);
        ganger_test_support::Run::from(command.output().unwrap())
    };
    with_env(&["start", "leak", "--message", "Hi."]).expect_code(0);
    let log = with_env(&["log", "leak"]);
    log.expect_code(0);
    assert!(
        log.stdout.contains("leaked [redacted:store]"),
        "{}",
        log.stdout
    );
    assert!(!log.stdout.contains(&password), "{}", log.stdout);
    // A password file others may read is not used, and says so.
    let open = private("open-pgpass", &format!("*:*:*:*:{password}\n"), 0o644);
    world.use_command_agent(agent, "", "");
    let mut status = world.command(&["status"]);
    status.env("GANGER_STORE", &bare).env("PGPASSFILE", &open);
    let refused = ganger_test_support::Run::from(status.output().unwrap());
    assert_eq!(refused.code, 70, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused.stderr.contains("group or world access"),
        "{}",
        refused.stderr
    );
}

/// A warm agent's host is handed the password as a round's host is: the next round, run by
/// the same warm host, reaches the store, and no process of it holds the password.
#[test]
fn a_warm_agents_host_on_a_store_with_pgpassword_holds_no_password() {
    use ganger_fake_llm::{FakeLlm, Script};
    let Some(db) = Database::new() else { return };
    let (user, password, port, name) = parts(&db.url);
    let bare = format!("postgres://{user}@127.0.0.1:{port}/{name}");
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let llm = FakeLlm::start(
        Script::new()
            .text("Done one. {{history}}")
            .text("Done two. {{history}}"),
    )
    .unwrap();
    world.write(
        "ganger.toml",
        &ganger_test_support::agent_toml(
            "claude",
            &llm.root_url(),
            "timeout = \"150s\"",
            "[warm]\ndefault = true\n",
        ),
    );
    let run = |args: &[&str]| {
        let mut command = world.command(args);
        command
            .env_remove(ganger_test_support::PG_SERVER_ENV)
            .env("GANGER_STORE", &bare)
            .env("PGPASSWORD", &password);
        ganger_test_support::Run::from(command.output().unwrap())
    };
    let first = run(&["start", "w", "--message", "one", "--json"]);
    assert_eq!(
        first.json()["status"],
        "done",
        "{}{}",
        first.stdout,
        first.stderr
    );
    let listed = run(&["warm", "list", "--json"]);
    let host = listed.json()["agents"][0]["host_pid"].as_u64().unwrap();
    let host = u32::try_from(host).unwrap();
    for pid in process_tree(host) {
        for what in ["cmdline", "environ"] {
            let text = std::fs::read(format!("/proc/{pid}/{what}")).unwrap_or_default();
            let text = String::from_utf8_lossy(&text).replace('\0', " ");
            assert!(!text.contains(&password), "/proc/{pid}/{what}: {text}");
        }
    }
    let second = run(&["fix", "w", "--message", "two", "--json"]);
    assert_eq!(
        second.json()["status"],
        "done",
        "{}{}",
        second.stdout,
        second.stderr
    );
    let again = run(&["warm", "list", "--json"]);
    assert_eq!(
        again.json()["agents"][0]["host_pid"].as_u64(),
        Some(u64::from(host))
    );
    run(&["warm", "stop", "--all"]).expect_code(0);
}

/// libpq's `PGSSLMODE` and `PGSSLROOTCERT` count where the URL names no mode or roots: with
/// the test CA, `status` answers over verified TLS; with a CA that signed nothing of the
/// server's, exit 70 naming TLS; and the URL's own `sslmode` outranks them.
#[test]
fn libpqs_tls_variables_count_where_the_url_says_nothing() {
    let Some(db) = Database::new() else { return };
    let roots = db.tls_roots();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let with_env = |store: &str, mode: &str, ca: &std::path::Path| {
        let mut command = world.command(&["status"]);
        command
            .env("GANGER_STORE", store)
            .env("PGSSLMODE", mode)
            .env("PGSSLROOTCERT", ca);
        ganger_test_support::Run::from(command.output().unwrap())
    };
    with_env(&db.url, "verify-full", &roots.ca).expect_code(0);
    let refused = with_env(&db.url, "verify-full", &roots.other_ca);
    assert_eq!(refused.code, 70, "{}{}", refused.stdout, refused.stderr);
    assert!(refused.stderr.contains("TLS"), "{}", refused.stderr);
    // The URL's own mode wins: no TLS at all, so the wrong CA is never read.
    with_env(
        &with(&db.url, "sslmode=disable"),
        "verify-full",
        &roots.other_ca,
    )
    .expect_code(0);
}
