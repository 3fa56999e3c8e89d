//! A queued start's options, as stored in `queue.options` (JSON): what `ganger start` would
//! have been given. Kept apart from `StartOptions` so that the stored form is explicit and
//! survives changes to the command line. Used by the fleet (`start --queue`, fleet files,
//! the scheduler's delivery) and by a race whose attempts go through the queue.

use crate::base::error::{EngineError, Result};
use crate::task::start::StartOptions;
use ganger_store::{Backend, NewQueued, QueueItem, QueueKind, StoreError};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A start's options as queued.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StartSpec {
    pub agent: Option<String>,
    pub model: Option<String>,
    pub sandbox: Option<String>,
    pub network: Option<String>,
    pub permission: Option<String>,
    pub base: Option<String>,
    pub timeout_ms: Option<u64>,
    pub stall_ms: Option<u64>,
    #[serde(default)]
    pub keys: Vec<String>,
    #[serde(default)]
    pub checks: Vec<String>,
    /// `KEY=VALUE` labels.
    #[serde(default)]
    pub labels: Vec<String>,
    /// The task's budget over all its rounds.
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
    /// Paths the sandbox leaves writable (`--rw`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rw: Vec<String>,
    /// What its `gateway` rounds may reach besides their model (`--allow`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm: Option<bool>,
    /// A task ganger names itself (a race's attempt, `SLUG.N`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dotted: bool,
}

impl StartSpec {
    /// What `start --queue` was given.
    pub fn of(options: &StartOptions) -> StartSpec {
        StartSpec {
            agent: options.agent.clone(),
            model: options.model.clone(),
            sandbox: options.sandbox.map(|s| s.as_str().to_owned()),
            network: options.network.map(|n| n.as_str().to_owned()),
            permission: options.permission.map(|p| p.as_str().to_owned()),
            base: options.base.clone(),
            timeout_ms: options.timeout.map(|t| t.as_millis() as u64),
            stall_ms: options.stall.map(|t| t.as_millis() as u64),
            keys: options.keys.clone(),
            checks: options.checks.clone(),
            labels: options.labels.clone(),
            budget_usd: options.budget.usd,
            budget_tokens: options.budget.tokens,
            rw: options.rw.clone(),
            allow: options.allow.clone(),
            warm: options.warm,
            dotted: options.dotted,
        }
    }

    /// Reads a stored spec.
    pub fn from_json(value: &serde_json::Value) -> Result<StartSpec> {
        serde_json::from_value(value.clone())
            .map_err(|e| EngineError::invalid(format!("unreadable queued options: {e}")))
    }

    /// The options of the start it becomes.
    pub fn start_options(&self, slug: &str) -> Result<StartOptions> {
        let parse = |what: &str, e: String| EngineError::invalid(format!("{what}: {e}"));
        Ok(StartOptions {
            slug: slug.to_owned(),
            agent: self.agent.clone(),
            model: self.model.clone(),
            base: self.base.clone(),
            keys: self.keys.clone(),
            timeout: self.timeout_ms.map(Duration::from_millis),
            stall: self.stall_ms.map(Duration::from_millis),
            permission: self
                .permission
                .as_deref()
                .map(|p| p.parse().map_err(|e| parse("permission", e)))
                .transpose()?,
            sandbox: self
                .sandbox
                .as_deref()
                .map(|s| s.parse().map_err(|e| parse("sandbox", e)))
                .transpose()?,
            network: self
                .network
                .as_deref()
                .map(|s| s.parse().map_err(|e| parse("network", e)))
                .transpose()?,
            checks: self.checks.clone(),
            labels: self.labels.clone(),
            budget: ganger_store::Budget {
                usd: self.budget_usd,
                tokens: self.budget_tokens,
            },
            rw: self.rw.clone(),
            allow: self.allow.clone(),
            warm: self.warm,
            dotted: self.dotted,
            ..StartOptions::default()
        })
    }
}

/// Queues the start of the task `options.slug` for a scheduler to deliver, as
/// `start --queue` does: its options as a [`StartSpec`], its prompt in the store, under
/// `fleet` (whose budget and limits it comes under). A start of the slug queued already is
/// [`StoreError::AlreadyQueued`].
pub(crate) fn queue_start_of(
    store: &mut dyn Backend,
    options: &StartOptions,
    prompt: &str,
    commander: &str,
    fleet: Option<String>,
) -> Result<QueueItem> {
    let spec = serde_json::to_value(StartSpec::of(options))
        .map_err(|e| EngineError::environment("failed to encode the queued start", e))?;
    let item = NewQueued {
        slug: options.slug.clone(),
        kind: QueueKind::Start,
        options: spec,
        prompt_file: std::path::PathBuf::new(),
        prompt: Some(prompt.to_owned()),
        commander: commander.to_owned(),
        generation: None,
        fleet,
        after: Vec::new(),
        not_before: 0,
    };
    store.enqueue(&item).map_err(|e: StoreError| e.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_survives_the_store_and_becomes_the_same_start() {
        let options = StartOptions {
            slug: "a".into(),
            agent: Some("command".into()),
            model: Some("m/x".into()),
            sandbox: Some(ganger_sandbox::SandboxKind::Bwrap),
            timeout: Some(Duration::from_secs(90)),
            checks: vec!["true".into()],
            labels: vec!["team=red".into()],
            budget: ganger_store::Budget {
                usd: Some(0.5),
                tokens: None,
            },
            ..StartOptions::default()
        };
        let spec = StartSpec::of(&options);
        let stored = serde_json::to_value(&spec).unwrap();
        let back = StartSpec::from_json(&stored).unwrap();
        assert_eq!(back, spec);
        let start = back.start_options("a").unwrap();
        assert_eq!(
            (start.agent, start.model, start.sandbox, start.timeout),
            (
                options.agent,
                options.model,
                options.sandbox,
                options.timeout
            )
        );
        assert_eq!(
            (start.checks, start.labels),
            (options.checks, options.labels)
        );
        assert_eq!(start.budget.usd, Some(0.5));
        let bad = serde_json::json!({"sandbox": "nowhere"});
        assert!(
            StartSpec::from_json(&bad)
                .unwrap()
                .start_options("a")
                .is_err()
        );
    }
}
