//! Gemini CLI's command line for one round:
//!
//! ```text
//! gemini --output-format stream-json --skip-trust [-m M] [--resume ID] --approval-mode MODE -p ""
//! ```
//!
//! with the prompt on stdin. Gemini joins piped stdin and the `-p` text; with `-p ""` the model
//! receives the stdin bytes exactly (measured with 0.61.0: a leading dash, quotes, inner and
//! trailing newlines and trailing spaces all arrived unchanged; `docs/agents/gemini-prompt.md`).
//! A prompt given as the `-p` argument would be read as an option when it starts with `-`.
//!
//! Permissions: `yolo` for [`Permission::Write`] (all tools, shell included, without asking);
//! `default` for [`Permission::ReadOnly`], in which headless Gemini withholds its write, edit
//! and shell tools from the model. `--skip-trust` because worktrees are new, untrusted folders.
//!
//! Gemini runs in one process: `GEMINI_CLI_NO_RELAUNCH=true` ([`NO_RELAUNCH_ENV`]). Without
//! it every start is two Node processes, the first loading most of the CLI only to start the
//! second with a heap of half the machine's memory, then waiting for it: 0.6 to 0.7 more
//! CPU-seconds a start and 150 MB more for a warm agent (docs/agents/relaunch.md).
//!
//! When ganger needs settings of its own (a custom endpoint, or `[agents.gemini.config]`),
//! Gemini runs with a home of its own under the agent's directory ([`HOME_ENV`]; see
//! `settings.rs`); otherwise in the user's, untouched.

use crate::Headless;
use crate::adapter::{CommandPlan, Permission, PlanError, RoundRequest, ScriptedEndpoint};
use crate::gemini::settings::{self, BASE_URL_ENV, HOME_ENV};

/// The variable that keeps Gemini CLI from starting itself a second time.
pub const NO_RELAUNCH_ENV: &str = "GEMINI_CLI_NO_RELAUNCH";

/// Gemini's home under the agent's directory, when ganger gives it one.
pub const HOME_DIR: &str = "home";

/// What makes [`plan`]'s command headless, taken out of it for the CLI's interactive
/// interface.
pub(super) const HEADLESS_OPTIONS: Headless = Headless {
    leading: &[],
    flags: &[],
    valued: &["--output-format", "-p"],
    joined: &[],
    trailing: None,
};

/// The command for one round.
pub fn plan(request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
    let mut args: Vec<String> = vec![
        "--output-format".into(),
        "stream-json".into(),
        "--skip-trust".into(),
    ];
    if let Some(model) = request.model {
        args.extend(["-m".into(), model.to_owned()]);
    }
    if let Some(session) = request.session {
        args.extend(["--resume".into(), session.to_owned()]);
    }
    let mode = match request.permission {
        Permission::Write => "yolo",
        Permission::ReadOnly => "default",
    };
    args.extend([
        "--approval-mode".into(),
        mode.into(),
        "-p".into(),
        String::new(),
    ]);
    let env = vec![(NO_RELAUNCH_ENV.to_owned(), "true".to_owned())];
    let mut plan = CommandPlan::new(args, env, Some(request.prompt.as_bytes().to_vec()));
    if request.var(BASE_URL_ENV).is_some() || request.config.is_some() {
        let home = request.agent_dir.join(HOME_DIR);
        plan.env
            .push((HOME_ENV.to_owned(), home.to_string_lossy().into_owned()));
        plan.files.push((
            home.join(".gemini").join("settings.json"),
            settings::settings(request)?,
        ));
    }
    Ok(plan)
}

/// Gemini CLI kept warm: `gemini --acp` with the round's model, settings and environment, in
/// approval mode `default`, in which ACP mode offers its writing tools and asks the client
/// before each (docs/agents/acp-measured.md); the prompt and the session go over the protocol.
pub fn warm_plan(request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
    let mut plan = plan(request)?;
    let mut args = vec!["--acp".to_owned(), "--skip-trust".to_owned()];
    if let Some(model) = request.model {
        args.extend(["-m".into(), model.to_owned()]);
    }
    args.extend(["--approval-mode".into(), "default".into()]);
    plan.args = args;
    plan.stdin = None;
    Ok(plan)
}

/// Gemini CLI pointed at a scripted server (the settings then select API-key auth).
pub fn scripted_endpoint(base_url: &str) -> ScriptedEndpoint {
    ScriptedEndpoint {
        model: "gemini-fake".into(),
        env: vec![
            ("GEMINI_API_KEY".into(), "scripted-model-key".into()),
            (BASE_URL_ENV.into(), base_url.to_owned()),
        ],
        config: None,
    }
}
