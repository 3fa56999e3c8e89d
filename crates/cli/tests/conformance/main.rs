//! The conformance suite: the same end-to-end scenarios, with the real pinned CLI against the
//! scripted model, for every agent. Test names are `AGENT::SCENARIO`, and
//! `scripts/conformance-table` turns a run's results into docs/agents.md's table.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod dialect;
mod scenarios;

macro_rules! suite {
    ($($module:ident = $dialect:path, $agent:literal);* $(;)?) => {$(
        mod $module {
            fn d() -> crate::dialect::Dialect {
                $dialect($agent)
            }
            #[test]
            fn writes_a_file() {
                crate::scenarios::writes_a_file(d());
            }
            #[test]
            fn fix_continues_the_session() {
                crate::scenarios::fix_continues_the_session(d());
            }
            #[test]
            fn read_only_writes_nothing() {
                crate::scenarios::read_only_writes_nothing(d());
            }
            #[test]
            fn refused_call_fails() {
                crate::scenarios::refused_call_fails(d());
            }
            #[test]
            fn read_only_refusal_is_listed() {
                crate::scenarios::read_only_refusal_is_listed(d());
            }
            #[test]
            fn http_401_fails() {
                crate::scenarios::http_401_fails(d());
            }
            #[test]
            fn http_500_fails() {
                crate::scenarios::http_500_fails(d());
            }
            #[test]
            fn hang_is_stalled() {
                crate::scenarios::hang_is_stalled(d());
            }
            #[test]
            fn refused_connection_ends() {
                crate::scenarios::refused_connection_ends(d());
            }
            #[test]
            fn cancel_stops_the_round() {
                crate::scenarios::cancel_stops_the_round(d());
            }
            #[test]
            fn tokens_match_the_model() {
                crate::scenarios::tokens_match_the_model(d());
            }
            #[test]
            fn checks_fix_loop() {
                crate::scenarios::checks_fix_loop(d());
            }
        }
    )*};
}

suite!(
    opencode = crate::dialect::dialect, "opencode";
    claude = crate::dialect::dialect, "claude";
    codex = crate::dialect::dialect, "codex";
    gemini = crate::dialect::dialect, "gemini";
    qwen = crate::dialect::dialect, "qwen";
);

/// The agents with a warm mode, kept warm (the warm columns of docs/agents.md's table): the scenarios each
/// passes, and the warm-only scenarios (`warm_only.rs`). Every agent passes all of them (Qwen's hanging model, once left out for a race
/// with the stall limit seen at stop 22, has passed every run since: 4 of 4 and 3 of 3 alone,
/// 2 of 2 beside the OpenCode column, and it did not end a hung turn on its own in 90 s).
macro_rules! warm_suite {
    ($($module:ident, $agent:literal: [$($scenario:ident),* $(,)?]);* $(;)?) => {$(
        mod $module {
            $(
                #[test]
                fn $scenario() {
                    crate::scenarios::$scenario(crate::dialect::warm($agent));
                }
            )*
            #[test]
            fn cancelled_mid_turn_then_cold_the_session_goes_on() {
                crate::warm_only::cancelled_mid_turn_then_cold_the_session_goes_on(
                    crate::dialect::warm($agent),
                );
            }
            #[test]
            fn a_denied_command_is_refused_logged_and_not_run() {
                crate::warm_only::a_denied_command_is_refused_logged_and_not_run(
                    crate::dialect::warm($agent),
                );
            }
            #[test]
            fn killed_host_leaves_nothing_and_idle_agents_stop() {
                crate::warm_only::killed_host_leaves_nothing_and_idle_agents_stop(
                    crate::dialect::warm($agent),
                );
            }
        }
    )*};
}

warm_suite!(
    opencode_warm, "opencode": [writes_a_file, fix_continues_the_session, read_only_writes_nothing,
        read_only_refusal_is_listed, refused_call_fails, http_401_fails, tokens_match_the_model, http_500_fails, hang_is_stalled,
        refused_connection_ends, cancel_stops_the_round, checks_fix_loop];
    gemini_warm, "gemini": [writes_a_file, fix_continues_the_session, read_only_writes_nothing,
        read_only_refusal_is_listed, refused_call_fails, http_401_fails, http_500_fails,
        hang_is_stalled, refused_connection_ends, cancel_stops_the_round, tokens_match_the_model,
        checks_fix_loop];
    claude_warm, "claude": [writes_a_file, fix_continues_the_session, read_only_writes_nothing,
        read_only_refusal_is_listed, refused_call_fails, http_401_fails, http_500_fails,
        hang_is_stalled, refused_connection_ends, cancel_stops_the_round, tokens_match_the_model,
        checks_fix_loop];
    codex_warm, "codex": [writes_a_file, fix_continues_the_session, read_only_writes_nothing,
        read_only_refusal_is_listed, refused_call_fails, http_401_fails, http_500_fails,
        hang_is_stalled, refused_connection_ends, cancel_stops_the_round, tokens_match_the_model,
        checks_fix_loop];
    qwen_warm, "qwen": [writes_a_file, fix_continues_the_session, read_only_writes_nothing,
        read_only_refusal_is_listed, refused_call_fails, refused_connection_ends, cancel_stops_the_round,
        http_401_fails, http_500_fails, hang_is_stalled, tokens_match_the_model, checks_fix_loop];
);

mod extras;
mod warm_only;

// The until-green loop is ganger's, the same for every agent: run with the cheapest to start.
mod until_green {
    #[test]
    fn gives_up_and_says_so() {
        crate::scenarios::until_green_gives_up(crate::dialect::dialect("claude"));
    }
}

mod command_agent {
    #[test]
    fn reads_a_known_format_with_a_session_named_up_front() {
        crate::extras::command_agent_with_a_known_format();
    }
    #[test]
    fn reads_plain_text() {
        crate::extras::command_agent_plain_text();
    }
}

mod agents_command {
    #[test]
    fn install_puts_the_tested_version_in_the_cache() {
        crate::extras::agents_install_into_the_cache();
    }
    #[test]
    fn doctor_checks_each_agent() {
        crate::extras::agents_doctor_checks_an_agent();
    }
    #[test]
    fn canary_compares_the_newest_release_with_the_pinned_one() {
        crate::extras::canary_compares_the_newest_release_with_the_pinned_one();
    }
}
