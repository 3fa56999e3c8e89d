//! The pinned agent CLIs for end-to-end tests. Each is found in `GANGER_TEST_<NAME>` (for
//! example `GANGER_TEST_OPENCODE`), else in ganger's cache (where `.ci/run`, `ganger agents
//! install` and `ganger demo` install them), else on `PATH` if it is the tested version. A
//! missing agent fails the test with the command that installs it.

use std::path::PathBuf;
use std::process::Command;

/// The OpenCode version ganger is tested with, from `pinned-agents.txt`.
pub fn opencode_version() -> &'static str {
    include_str!("../../../pinned-agents.txt")
        .lines()
        .find_map(|line| line.trim().strip_prefix("opencode-ai@"))
        .expect("pinned-agents.txt pins opencode-ai")
}

fn cache_root() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("ganger")
}

/// The pinned OpenCode; panics with instructions when it is not installed.
pub fn opencode_program() -> PathBuf {
    agent_program("opencode")
}

/// The pinned CLI of the agent `name` (`opencode`, `claude`, ...); panics with instructions
/// when it is not installed.
pub fn agent_program(name: &str) -> PathBuf {
    let adapter =
        ganger_agents::adapter(name).unwrap_or_else(|| panic!("no adapter is called {name}"));
    let variable = format!("GANGER_TEST_{}", name.to_uppercase());
    if let Some(path) = std::env::var_os(&variable) {
        return PathBuf::from(path);
    }
    let version = adapter.tested_version();
    let dir = cache_root()
        .join("agents")
        .join(format!("{name}-{version}"));
    let cached = dir.join("node_modules/.bin").join(adapter.program());
    if cached.is_file() {
        return cached;
    }
    if let Ok(output) = Command::new(adapter.program()).arg("--version").output()
        && adapter
            .parse_version(&String::from_utf8_lossy(&output.stdout))
            .as_deref()
            == Some(version)
    {
        return PathBuf::from(adapter.program());
    }
    panic!(
        "{} {version} is not installed: run `npm install --prefix {} {}@{version}` (what scripts/test.sh does), or set {variable}",
        adapter.display_name(),
        dir.display(),
        adapter.npm_package(),
    );
}

/// A `ganger.toml` that points the agent `name` at a scripted model at `base_url` (through
/// its adapter's scripted endpoint, as `ganger agents doctor` does), with `defaults` added to
/// `[defaults]` and `extra` appended.
pub fn agent_toml(name: &str, base_url: &str, defaults: &str, extra: &str) -> String {
    let adapter =
        ganger_agents::adapter(name).unwrap_or_else(|| panic!("no adapter is called {name}"));
    ganger_engine::scripted::scripted_toml(
        adapter,
        &agent_program(name),
        base_url,
        &[],
        defaults,
        extra,
    )
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A `ganger.toml` that points OpenCode at a scripted model at `base_url`, with the given
/// extra TOML appended (more settings, or overrides of `[defaults]` keys are not allowed:
/// pass them in `defaults`).
pub fn opencode_toml(base_url: &str, defaults: &str, api_key: &str, extra: &str) -> String {
    let agent = opencode_agent_toml(
        base_url,
        api_key,
        "scripted = { limit = { context = 128000, output = 8192 }, cost = { input = 3, output = 15 } }",
    );
    format!("[defaults]\nmodel = \"mock/scripted\"\n{defaults}\n\n{agent}{extra}\n")
}

/// The `[agents.opencode]` tables of [`opencode_toml`]: the pinned OpenCode, its provider
/// `mock` at `base_url` offering `models` (the inside of a TOML inline table), `mock/scripted`
/// its default model.
pub fn opencode_agent_toml(base_url: &str, api_key: &str, models: &str) -> String {
    format!(
        r#"[agents.opencode]
command = {program}
env = {{ OPENCODE_DISABLE_MODELS_FETCH = "1" }}

[agents.opencode.config]
model = "mock/scripted"
small_model = "mock/scripted"
share = "disabled"

[agents.opencode.config.provider.mock]
npm = "@ai-sdk/openai-compatible"
options = {{ baseURL = {base_url}, apiKey = {api_key} }}
models = {{ {models} }}
"#,
        program = quoted(&opencode_program().to_string_lossy()),
        base_url = quoted(base_url),
        api_key = quoted(api_key),
    )
}

/// The stand-in `opencode` (a shell script) of the fast tests.
pub const FAKE_OPENCODE: &str = include_str!("fake-opencode.sh");

/// Writes the stand-in `opencode` into `dir` and returns its path.
pub fn write_fake_opencode(dir: &std::path::Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-opencode");
    std::fs::write(&path, FAKE_OPENCODE).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}
