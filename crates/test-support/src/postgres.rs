//! A database of its own on the test PostgreSQL server (`GANGER_TEST_POSTGRES`, made by
//! `scripts/postgres-cluster`; `.ci/run` starts it), dropped after the test. Without the
//! variable a test says so and passes, except under `CI=true`, where it fails: CI must not
//! skip the PostgreSQL tests silently.

use std::sync::atomic::{AtomicU32, Ordering};

/// The variable naming the server: a URL of a role that may create databases.
pub const SERVER_ENV: &str = "GANGER_TEST_POSTGRES";

/// A database made for one test.
#[derive(Debug)]
pub struct PgDatabase {
    admin: String,
    name: String,
    /// Its URL, with the server's role and password.
    pub url: String,
}

impl PgDatabase {
    /// A new, empty database; `None` (with a note) when no server is named outside CI.
    pub fn new() -> Option<PgDatabase> {
        let Ok(admin) = std::env::var(SERVER_ENV) else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{SERVER_ENV} is not set: CI runs these tests against a server \
                 (scripts/postgres-cluster DIR PORT prints its URL)"
            );
            #[expect(clippy::print_stderr, reason = "a skipped test says why")]
            {
                eprintln!("note: {SERVER_ENV} is not set; skipping this PostgreSQL test");
            }
            return None;
        };
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "ganger_cli_{}_{}_{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut client = postgres::Client::connect(&admin, postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to the test server: {e}"));
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("cannot create database {name}: {e}"));
        let (base, _) = admin
            .rsplit_once('/')
            .unwrap_or_else(|| panic!("{SERVER_ENV} names no database"));
        let url = format!("{base}/{name}");
        Some(PgDatabase { admin, name, url })
    }

    /// A connection to this database.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to the test database: {e}"))
    }

    /// The number `sql` (a count) finds in this database.
    pub fn count(&self, sql: &str) -> i64 {
        self.client()
            .query_one(sql, &[])
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .get(0)
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = client.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// The test server's TLS roots: the CA that signed its certificate, and one that signed nothing
/// of it (`scripts/postgres-cluster` makes both beside the server's certificate).
#[derive(Debug, Clone)]
pub struct PgTlsRoots {
    pub ca: std::path::PathBuf,
    pub other_ca: std::path::PathBuf,
}

impl PgDatabase {
    /// The server's TLS roots, found beside its `ssl_cert_file`.
    pub fn tls_roots(&self) -> PgTlsRoots {
        let mut client = postgres::Client::connect(&self.admin, postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to the test server: {e}"));
        let cert: String = client
            .query_one("SELECT current_setting('ssl_cert_file')", &[])
            .unwrap_or_else(|e| panic!("the test server's ssl_cert_file: {e}"))
            .get(0);
        let dir = std::path::Path::new(&cert)
            .parent()
            .unwrap_or_else(|| panic!("ssl_cert_file {cert} has no directory"))
            .to_owned();
        PgTlsRoots {
            ca: dir.join("ca.crt"),
            other_ca: dir.join("other-ca.crt"),
        }
    }

    /// How many connections to this database are open over TLS (`true`) and without.
    pub fn connections_by_tls(&self) -> (i64, i64) {
        let row = self
            .client()
            .query_one(
                "SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl) \
                 FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
                 WHERE a.datname = $1 AND a.application_name = 'ganger'",
                &[&self.name],
            )
            .unwrap_or_else(|e| panic!("pg_stat_ssl: {e}"));
        (row.get(0), row.get(1))
    }
}
