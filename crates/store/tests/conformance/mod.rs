//! The store's conformance suite: every promise the store makes to the engine, as tests
//! written against the [`Backend`] trait alone, so that each backend is held to the same ones.
//! A backend's test file implements [`Site`] (a fresh, empty store for one test, and any
//! number of connections to it, as separate processes would open them) and calls [`suite!`],
//! which makes one `#[test]` per promise: `tests/sqlite_conformance.rs` for SQLite; a
//! PostgreSQL backend adds its own file with its own `Site` and changes nothing here.
//!
//! Timing promises are stated with room for a networked backend: a released claim wakes its
//! waiter within half a second, while a dropped one (a holder that died) may take as long as
//! a lease runs, up to [`DEATH_NOTICED_WITHIN`].

use ganger_store::Backend;
use std::time::Duration;

pub mod claims;
pub mod conflicts;
pub mod evidence;
pub mod fixtures;
pub mod generations;
pub mod journal;
pub mod land;
pub mod liveness;
pub mod pipelines;
pub mod queue;
pub mod races;
pub mod rounds;
pub mod streams;
pub mod tallies;
pub mod workers;

/// One empty store for one test.
pub trait Site: Sync {
    /// A new connection to this site's store, as another process would open it.
    fn connect(&self) -> Box<dyn Backend>;
}

/// How long a backend may take to see that a claim's holder died without releasing it.
pub const DEATH_NOTICED_WITHIN: Duration = Duration::from_secs(30);

/// How soon a waiter wakes after a claim is released: told at once, not at its next look (a
/// backend that looks again every second would wake a random part of a second later). Room
/// is left for a machine busy with other tests (CI saw 540 ms once on two loaded cores).
pub const WAKES_WITHIN: Duration = Duration::from_millis(800);

/// One `#[test]` per promise, each on a site made by `$site` (an expression).
macro_rules! suite {
    ($site:expr) => {
        $crate::conformance::suite!(@tests $site;
            rounds::a_task_and_its_rounds_are_kept_and_listed,
            rounds::a_busy_task_refuses_a_second_round_and_changes_nothing,
            rounds::of_racing_rounds_of_one_task_from_many_connections_exactly_one_starts,
            rounds::a_round_ends_once_and_cancel_asks_only_a_running_round,
            rounds::a_cleaned_task_keeps_its_record_and_says_when_it_was_cleaned,
            rounds::a_moved_worktree_is_where_the_task_is_found_next,
            generations::a_transfer_bumps_the_generation_and_stale_or_foreign_rounds_are_refused,
            generations::an_adopted_task_has_its_session_and_no_round,
            queue::items_move_only_from_the_state_they_are_in,
            queue::a_scheduler_reads_the_queue_a_page_at_a_time_by_state,
            queue::of_racing_queued_starts_of_one_slug_exactly_one_is_accepted,
            queue::concurrent_submissions_of_one_fleet_queue_each_task_once,
            queue::a_fleet_is_refused_a_slug_another_fleet_or_no_fleet_holds_and_writes_nothing,
            journal::the_journal_is_in_order_and_reads_on_from_a_cursor,
            journal::a_commanders_journal_holds_its_tasks_and_its_cursor_only_moves_on,
            claims::a_start_under_way_excludes_another_start_of_its_slug_until_it_ends,
            claims::a_clean_under_way_refuses_rounds_and_a_second_clean,
            liveness::a_claim_lives_while_held_and_is_dead_once_dropped,
            liveness::a_released_claim_wakes_its_waiter_at_once,
            liveness::the_dead_rounds_are_the_running_ones_whose_claim_is_dead,
            streams::a_stream_reads_back_from_any_offset,
            streams::a_kept_session_reads_back_and_only_a_later_round_replaces_it,
            streams::a_follow_sees_what_is_appended_and_stops_at_the_rounds_end,
            streams::a_follow_of_a_stream_its_dead_round_never_made_fails,
            streams::a_finished_rounds_packed_stream_reads_back_byte_for_byte,
            evidence::spending_is_summed_per_task_and_per_fleet,
            evidence::labels_done_lines_and_groups_read_back,
            evidence::a_new_tasks_labels_budget_and_fleet_are_recorded_with_it,
            pipelines::role_tasks_live_under_a_bare_task_and_a_pipeline_reads_back,
            pipelines::a_rewind_marks_later_rounds_and_the_next_round_takes_its_note,
            races::a_race_is_recorded_once_and_never_over_a_task_of_its_name,
            races::a_races_verdicts_are_kept_once_and_its_end_is_written_once,
            races::a_races_spending_is_its_attempts_and_judges_and_no_other_tasks,
            workers::of_racing_claims_of_an_item_exactly_one_wins_and_is_recorded,
            workers::an_item_of_a_dead_claimant_is_taken_over_once,
            workers::workers_are_registered_seen_listed_and_removed,
            land::a_batch_takes_a_bases_items_by_priority_then_age_and_a_task_is_queued_once,
            land::a_landed_batch_lands_once_an_abandoned_one_is_queued_again_and_a_returned_item_leaves,
            land::of_racing_landers_each_item_is_in_one_batch_and_one_holds_a_bases_claim,
            land::a_batch_takes_only_the_tasks_of_its_first_items_sandbox_and_network,
            conflicts::a_conflict_is_journaled_once_kept_while_found_and_cleared_by_either_task,
            conflicts::the_open_snapshots_of_a_base_are_the_last_ended_rounds_of_its_other_open_tasks,
            tallies::rounds_are_tallied_by_agent_and_status_with_their_durations,
        );
    };
    (@tests $site:expr; $($module:ident :: $test:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                let site = $site;
                $crate::conformance::$module::$test(&site);
            }
        )*
    };
}
pub(crate) use suite;
