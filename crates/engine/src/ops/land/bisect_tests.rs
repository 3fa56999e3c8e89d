//! The batch's decisions as a table: the batch, which prefixes fail (a model of the checks),
//! and the runs, the culprits and what lands.

use super::{Bisection, Next};

/// What a bisection ended with: what landed and the culprits, or `None` for a red base.
type Ended = Option<(Vec<i64>, Vec<i64>)>;

/// Runs a bisection against `red(prefix)`, the checks' verdict on a set of tasks (plus the
/// base's own); returns the tests run (base tests as `0`), what landed and the culprits.
fn run(items: &[i64], base_red: bool, red: &dyn Fn(&[i64]) -> bool) -> (Vec<usize>, Ended) {
    let mut bisection = Bisection::new(items.to_vec());
    let mut tests = Vec::new();
    for _ in 0..100 {
        match bisection.next() {
            Next::Test(n) => {
                assert!(n >= 1 && n <= bisection.items().len(), "{n}");
                tests.push(n);
                let fails = red(&bisection.items()[..n]);
                bisection.record(n, !fails);
            }
            Next::TestBase => {
                tests.push(0);
                bisection.record_base(!base_red);
            }
            Next::BaseRed => return (tests, None),
            Next::Land { land, culprits } => return (tests, Some((land, culprits))),
        }
    }
    panic!("no end: {bisection:?}");
}

/// Red when any of `bad` is in the set with at least one other task (a task that breaks the
/// checks only combined with the others).
fn combined(bad: &'static [i64]) -> impl Fn(&[i64]) -> bool {
    move |set: &[i64]| set.iter().any(|t| bad.contains(t)) && set.len() > 1
}

/// Red when any of `bad` is in the set.
fn alone(bad: &'static [i64]) -> impl Fn(&[i64]) -> bool {
    move |set: &[i64]| set.iter().any(|t| bad.contains(t))
}

#[test]
fn the_batch_lands_what_passes_and_finds_each_culprit_in_about_log2_n_runs() {
    let seven = [1, 2, 3, 4, 5, 6, 7];
    // (case, items, the checks, runs at most, lands, culprits)
    type Case = (
        &'static str,
        Vec<i64>,
        Box<dyn Fn(&[i64]) -> bool>,
        usize,
        Vec<i64>,
        Vec<i64>,
    );
    let cases: Vec<Case> = vec![
        (
            "green: one run",
            seven.to_vec(),
            Box::new(|_: &[i64]| false),
            1,
            seven.to_vec(),
            vec![],
        ),
        (
            "one culprit, last",
            seven.to_vec(),
            Box::new(alone(&[7])),
            4,
            vec![1, 2, 3, 4, 5, 6],
            vec![7],
        ),
        (
            "one culprit, middle",
            seven.to_vec(),
            Box::new(alone(&[4])),
            6,
            vec![1, 2, 3, 5, 6, 7],
            vec![4],
        ),
        // The batch: 2 of 7 break the checks only together with others: 2·⌈log2 8⌉+1.
        (
            "two combined culprits",
            seven.to_vec(),
            Box::new(combined(&[3, 6])),
            7,
            vec![1, 2, 4, 5, 7],
            vec![3, 6],
        ),
        (
            "two culprits side by side",
            seven.to_vec(),
            Box::new(alone(&[4, 5])),
            8,
            vec![1, 2, 3, 6, 7],
            vec![4, 5],
        ),
        (
            "all red",
            vec![1, 2, 3],
            Box::new(alone(&[1, 2, 3])),
            6,
            vec![],
            vec![1, 2, 3],
        ),
        (
            "one task, red",
            vec![9],
            Box::new(alone(&[9])),
            2,
            vec![],
            vec![9],
        ),
        (
            "one task, green",
            vec![9],
            Box::new(|_: &[i64]| false),
            1,
            vec![9],
            vec![],
        ),
        (
            "empty batch",
            vec![],
            Box::new(|_: &[i64]| true),
            0,
            vec![],
            vec![],
        ),
    ];
    for (case, items, checks, most, lands, culprits) in cases {
        let (tests, end) = run(&items, false, &*checks);
        let (landed, found) = end.unwrap_or_else(|| panic!("{case}: the base counted red"));
        assert_eq!(landed, lands, "{case}: {tests:?}");
        assert_eq!(found, culprits, "{case}: {tests:?}");
        assert!(
            tests.len() <= most,
            "{case}: {} runs: {tests:?}",
            tests.len()
        );
        assert!(
            !checks(&landed) || landed.is_empty(),
            "{case}: what lands passes"
        );
    }
}

#[test]
fn a_first_task_red_alone_has_the_base_tested_and_a_red_base_stops_the_batch() {
    let (tests, end) = run(&[1, 2, 3], true, &|_: &[i64]| true);
    assert_eq!(end, None);
    assert_eq!(tests, [3, 1, 0]);
    // A green base: the first task is the culprit, and the base is asked once only.
    let (tests, end) = run(&[1, 2, 3], false, &alone(&[1, 2]));
    assert_eq!(end, Some((vec![3], vec![1, 2])));
    assert_eq!(tests.iter().filter(|n| **n == 0).count(), 1, "{tests:?}");
}

#[test]
fn a_task_taken_out_forgets_what_was_known_of_the_prefixes_that_held_it() {
    let mut bisection = Bisection::new(vec![1, 2, 3, 4]);
    assert_eq!(bisection.next(), Next::Test(4));
    bisection.record(4, false);
    assert_eq!(bisection.next(), Next::Test(2));
    bisection.record(2, true);
    bisection.remove(2);
    assert_eq!(bisection.items(), [1, 2, 4]);
    // Prefix 2 is still green; the rest is searched again, "none left" included.
    assert_eq!(bisection.next(), Next::Test(3));
    bisection.record(3, true);
    assert_eq!(
        bisection.next(),
        Next::Land {
            land: vec![1, 2, 4],
            culprits: vec![]
        }
    );
}
