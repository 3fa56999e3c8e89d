//! The sandbox suite: for `bwrap` and `docker` and every agent, the real pinned CLI against
//! the scripted model on the host's loopback, in a real git repository: a round and a resumed
//! fix, writes outside the worktree that fail, secrets the worker cannot read, a cancelled
//! round that leaves nothing behind; the same round and fix with the agent kept warm (in
//! bubblewrap and Docker); and, with a plain command, `--network none`.
//! Test names are `SANDBOX::AGENT::SCENARIO`.
//!
//! Under `CI=true` a missing engine fails the test; elsewhere the test says it is skipped.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

#[path = "../conformance/dialect.rs"]
#[allow(
    dead_code,
    reason = "the conformance suite reads the figures this suite does not"
)]
mod dialect;
mod engines;
mod gateway;
mod land;
mod private_daemon;
mod scenarios;

macro_rules! agents {
    ($sandbox:ident: $($agent:ident),* $(,)?) => {$(
        mod $agent {
            fn d() -> crate::dialect::Dialect {
                crate::dialect::dialect(stringify!($agent))
            }
            fn sandbox() -> &'static str {
                stringify!($sandbox)
            }
            #[test]
            fn round_fix_and_confinement() {
                crate::scenarios::round_fix_and_confinement(sandbox(), d());
            }
            #[test]
            fn read_only_worktree() {
                crate::scenarios::read_only_worktree(sandbox(), d());
            }
            #[test]
            fn cancel_leaves_nothing() {
                crate::scenarios::cancel_leaves_nothing(sandbox(), d());
            }
        }
    )*};
}

/// The agents with a warm mode, kept warm in the sandbox: the warm agent is started in it as
/// a cold round's agent is, and the same round and fix are confined the same way.
macro_rules! warm_agents {
    ($sandbox:ident: $($module:ident = $agent:literal),* $(,)?) => {$(
        mod $module {
            #[test]
            fn round_fix_and_confinement() {
                crate::scenarios::round_fix_and_confinement(
                    stringify!($sandbox),
                    crate::dialect::warm($agent),
                );
            }
        }
    )*};
}

mod bwrap {
    agents!(bwrap: opencode, claude, codex, gemini, qwen);
    // Gemini CLI kept warm refuses the round's escaping write with its own workspace guard
    // (ganger's policy leaves that write to the sandbox): counted as the sandbox's refusal
    // would be, as in its cold round.
    warm_agents!(bwrap: opencode_warm = "opencode", claude_warm = "claude", codex_warm = "codex",
        qwen_warm = "qwen", gemini_warm = "gemini");

    #[test]
    fn network_none_reaches_nothing() {
        crate::scenarios::network_none_reaches_nothing("bwrap");
    }

    #[test]
    fn network_gateway_reaches_the_allow_list_only() {
        crate::scenarios::network_gateway_reaches_the_allow_list_only("bwrap");
    }

    #[test]
    fn dead_host_leaves_nothing() {
        crate::scenarios::dead_host_leaves_nothing("bwrap");
    }

    #[test]
    fn checks_run_in_the_sandbox() {
        crate::scenarios::checks_run_in_the_sandbox("bwrap");
    }

    #[test]
    fn a_batchs_checks_run_in_its_tasks_sandbox() {
        crate::land::a_batchs_checks_run_in_its_tasks_sandbox("bwrap");
    }

    #[test]
    fn the_agent_home_is_private_and_goes_with_clean() {
        crate::scenarios::the_agent_home_is_private_and_goes_with_clean("bwrap");
    }

    #[test]
    fn the_model_key_stays_at_the_gateway() {
        crate::gateway::the_model_key_stays_at_the_gateway("bwrap");
    }
}

mod docker {
    agents!(docker: opencode, claude, codex, gemini, qwen);
    warm_agents!(docker: opencode_warm = "opencode", claude_warm = "claude", codex_warm = "codex",
        qwen_warm = "qwen", gemini_warm = "gemini");

    #[test]
    fn a_daemon_that_stops_mid_round_is_named_and_loses_nothing() {
        crate::private_daemon::a_daemon_that_stops_mid_round_is_named_and_loses_nothing();
    }

    #[test]
    fn network_none_reaches_nothing() {
        crate::scenarios::network_none_reaches_nothing("docker");
    }

    #[test]
    fn network_gateway_reaches_the_allow_list_only() {
        crate::scenarios::network_gateway_reaches_the_allow_list_only("docker");
    }

    #[test]
    fn dead_host_leaves_nothing() {
        crate::scenarios::dead_host_leaves_nothing("docker");
    }

    #[test]
    fn checks_run_in_the_sandbox() {
        crate::scenarios::checks_run_in_the_sandbox("docker");
    }

    #[test]
    fn a_batchs_checks_run_in_its_tasks_sandbox() {
        crate::land::a_batchs_checks_run_in_its_tasks_sandbox("docker");
    }

    #[test]
    fn checks_in_a_row_each_get_their_container() {
        crate::scenarios::checks_in_a_row_each_get_their_container("docker");
    }

    #[test]
    fn the_model_key_stays_at_the_gateway() {
        crate::gateway::the_model_key_stays_at_the_gateway("docker");
    }
}
