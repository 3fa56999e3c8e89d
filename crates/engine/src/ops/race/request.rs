//! How a race's options become its recorded request ([`Request`], on the task floor) and
//! back: the driver resumed from the store starts every attempt as the first one would have.

use super::RaceOptions;
use crate::base::brief::Brief;
use crate::base::error::{EngineError, Result};
use crate::task::race_request::Request;
use crate::task::start::StartOptions;
use std::time::Duration;

impl Request {
    /// The request of `options`, whose brief reads `prompt`.
    pub fn of(options: &RaceOptions, prompt: &str) -> Request {
        let start = &options.start;
        Request {
            brief: prompt.to_owned(),
            first_green: options.first_green,
            max: options.max,
            queue: false,
            fleet: None,
            checks: start.checks.clone(),
            until_green: start.until_green,
            budget_usd: start.budget.usd,
            budget_tokens: start.budget.tokens,
            permission: start.permission,
            sandbox: start.sandbox,
            network: start.network,
            rw: start.rw.clone(),
            allow: start.allow.clone(),
            base: start.base.clone(),
            keys: start.keys.clone(),
            timeout_ms: start.timeout.map(|d| d.as_millis() as u64),
            stall_ms: start.stall.map(|d| d.as_millis() as u64),
            warm: start.warm,
        }
    }

    /// The options of the race `slug` of `spec`, owned by `owner`, as it was asked.
    pub fn options(
        value: &serde_json::Value,
        slug: &str,
        spec: &str,
        owner: &str,
    ) -> Result<RaceOptions> {
        let request: Request = serde_json::from_value(value.clone()).map_err(|e| {
            EngineError::invalid(format!(
                "race {slug}: its recorded request does not read: {e}"
            ))
        })?;
        Ok(RaceOptions {
            slug: slug.to_owned(),
            brief: Some(Brief::Message(request.brief)),
            attempts: spec.to_owned(),
            first_green: request.first_green,
            max: request.max,
            start: StartOptions {
                slug: slug.to_owned(),
                checks: request.checks,
                until_green: request.until_green,
                budget: ganger_store::Budget {
                    usd: request.budget_usd,
                    tokens: request.budget_tokens,
                },
                permission: request.permission,
                sandbox: request.sandbox,
                network: request.network,
                rw: request.rw,
                allow: request.allow,
                base: request.base,
                keys: request.keys,
                timeout: request.timeout_ms.map(Duration::from_millis),
                stall: request.stall_ms.map(Duration::from_millis),
                warm: request.warm,
                commander: Some(owner.to_owned()),
                ..StartOptions::default()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ganger_agents::Permission;
    use ganger_sandbox::{Network, SandboxKind};

    #[test]
    fn a_request_read_back_is_the_race_that_was_asked() {
        let options = RaceOptions {
            slug: "r".into(),
            brief: Some(Brief::Message("the brief".into())),
            attempts: "a*2".into(),
            first_green: true,
            max: Some(2),
            start: StartOptions {
                slug: "r".into(),
                checks: vec!["make test".into()],
                until_green: Some(2),
                budget: ganger_store::Budget {
                    usd: Some(1.5),
                    tokens: None,
                },
                permission: Some(Permission::ReadOnly),
                sandbox: Some(SandboxKind::Bwrap),
                network: Some(Network::None),
                rw: vec!["target".into()],
                base: Some("dev".into()),
                keys: vec!["openrouter=/k".into()],
                timeout: Some(Duration::from_secs(90)),
                stall: Some(Duration::from_secs(30)),
                warm: Some(false),
                commander: Some("alice".into()),
                ..StartOptions::default()
            },
        };
        let stored = Request::of(&options, "the brief").to_json().unwrap();
        let back = Request::options(&stored, "r", "a*2", "alice").unwrap();
        assert_eq!(
            Request::of(&back, "the brief"),
            Request::of(&options, "the brief")
        );
        assert_eq!(back.start.commander.as_deref(), Some("alice"));
        assert!(matches!(back.brief, Some(Brief::Message(ref m)) if m == "the brief"));
        // A request recorded by a build that kept less still reads.
        let old = serde_json::json!({"brief": "b", "first_green": false});
        assert_eq!(
            Request::options(&old, "r", "a*2", "bob")
                .unwrap()
                .start
                .checks
                .len(),
            0
        );
    }
}
