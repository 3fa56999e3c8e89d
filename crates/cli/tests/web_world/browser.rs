//! Headless Chromium driven through WebDriver (Debian's `chromium` and `chromium-driver`,
//! with the fantoccini crate): a chromedriver of the test's own on a free loopback port and
//! one browser session. Where they are missing, the test is skipped with the packages to
//! install, except under CI=true, where it fails.

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A browser and its driver, stopped on drop.
pub struct Browser {
    pub client: Client,
    driver: Child,
    /// `GANGER_TEST_BROWSER=...`, in the environment of the driver and of every Chromium
    /// process it starts.
    marker: String,
}

impl Drop for Browser {
    /// Kills the driver and every Chromium process it started: Chromium outlives a killed
    /// chromedriver (its renderers and crash handlers too, some in sessions of their own), and
    /// a suite that leaves a browser per test runs the machine out of memory.
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        for _ in 0..50 {
            let left = ganger_test_support::living_pids_with_env(&self.marker);
            if left.is_empty() {
                break;
            }
            let _ = Command::new("kill")
                .arg("-KILL")
                .args(left.iter().map(i32::to_string))
                .stderr(Stdio::null())
                .status();
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// Whether the browser is here; a missing one fails under CI=true.
#[expect(
    clippy::print_stderr,
    reason = "a skipped test says so in the test output"
)]
pub fn browser_available(test: &str) -> bool {
    if on_path("chromedriver") && on_path("chromium") {
        return true;
    }
    let message = format!(
        "{test}: chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("skipped: {message}");
    false
}

impl Browser {
    /// Starts chromedriver and a headless Chromium of `width` x `height`.
    pub async fn start(width: u32, height: u32) -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        static STARTED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let value = format!(
            "{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        #[expect(
            clippy::disallowed_methods,
            reason = "the test runs the browser's driver, not an agent"
        )]
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .env("GANGER_TEST_BROWSER", &value)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", format!("--window-size={width},{height}")],
            }),
        );
        // Chromium's first start takes seconds, and much longer on a loaded machine.
        let deadline = Instant::now() + Duration::from_secs(90);
        let client = loop {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(capabilities.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
            {
                Ok(client) => break client,
                Err(e) => {
                    assert!(
                        Instant::now() < deadline,
                        "chromedriver did not answer: {e}"
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        Browser {
            client,
            driver,
            marker: format!("GANGER_TEST_BROWSER={value}"),
        }
    }

    /// A browser on the dashboard of `served`, the owner's token given once in the address,
    /// once the page knows who it is.
    pub async fn on_dashboard(served: &crate::web_world::Served) -> Browser {
        let browser = Browser::start(1280, 900).await;
        browser
            .client
            .goto(&format!("{}/#token={}", served.base, served.token))
            .await
            .unwrap();
        browser
            .wait_for(
                Duration::from_secs(60),
                "the page to know who it is",
                "return document.querySelector('#whoami')?.textContent.includes('(write)');",
            )
            .await;
        browser
    }

    /// The value of `script` (a function body returning a value) in the page.
    pub async fn eval(&self, script: &str) -> Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    /// Waits until `script` returns something truthy; panics with `what` after `limit`.
    pub async fn wait_for(&self, limit: Duration, what: &str, script: &str) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let value = self
                .client
                .execute(script, vec![])
                .await
                .unwrap_or(Value::Null);
            let truthy = match &value {
                Value::Null | Value::Bool(false) => false,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                _ => true,
            };
            if truthy {
                return value;
            }
            if Instant::now() >= deadline {
                let page = self
                    .client
                    .execute(
                        "return document.body ? document.body.innerText.slice(0, 2000) : null;",
                        vec![],
                    )
                    .await
                    .unwrap_or(Value::Null);
                panic!("timed out after {limit:?} waiting for {what}; the page showed:\n{page}");
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Whether the page, at a phone's width (390 px) once `ready` (a script) is truthy, fits
    /// with nothing to scroll sideways; the window is put back to `width` x `height` after.
    pub async fn fits_a_phone(&self, ready: &str, width: u32, height: u32) -> bool {
        self.client.set_window_size(390, 844).await.unwrap();
        let script = format!("return window.innerWidth <= 400 && (() => {{ {ready} }})();");
        self.wait_for(Duration::from_secs(60), "the page at 390 px", &script)
            .await;
        let fits = self
            .eval("return document.documentElement.scrollWidth <= window.innerWidth;")
            .await
            == Value::Bool(true);
        self.client.set_window_size(width, height).await.unwrap();
        fits
    }

    /// Clicks the element `css`.
    pub async fn click(&self, css: &str) {
        self.client
            .wait()
            .at_most(Duration::from_secs(60))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css}: {e}"))
            .click()
            .await
            .unwrap();
    }

    /// Types `text` into the element `css`.
    pub async fn type_into(&self, css: &str, text: &str) {
        self.client
            .wait()
            .at_most(Duration::from_secs(60))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css}: {e}"))
            .send_keys(text)
            .await
            .unwrap();
    }

    /// Writes a screenshot of the page to `path`.
    pub async fn screenshot(&self, path: &std::path::Path) {
        let png = self.client.screenshot().await.unwrap();
        std::fs::write(path, png).unwrap();
    }
}
