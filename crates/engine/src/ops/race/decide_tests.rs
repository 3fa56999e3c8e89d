//! The race's rule as a table: each case its attempts, its verdicts, and the winner and rule.

use super::*;

fn e(number: u32, passed: bool, lines: u64, cost_usd: f64, finished_at: i64) -> Entrant {
    Entrant {
        number,
        passed,
        lines,
        cost_usd,
        finished_at: Some(finished_at),
    }
}

/// Both judgements of every pair, from a reviewer that answers by `prefer(a, b)`.
fn reviewed(survivors: &[u32], prefer: impl Fn(u32, u32) -> Side) -> Vec<Judged> {
    judgements_needed(survivors)
        .into_iter()
        .map(|(a, b)| Judged {
            a,
            b,
            side: prefer(a, b),
        })
        .collect()
}

#[test]
fn the_rule_decides_as_the_issue_says() {
    let small_wins = |small: u32| move |a: u32, _b: u32| if a == small { Side::A } else { Side::B };
    let always_a = |_: u32, _: u32| Side::A;
    // (name, entrants, judgements, first_green, winner, rule)
    type Case = (
        &'static str,
        Vec<Entrant>,
        Vec<Judged>,
        Option<u32>,
        Option<u32>,
        Rule,
    );
    let three = vec![
        e(1, false, 5, 0.1, 10),
        e(2, true, 90, 0.1, 20),
        e(3, true, 4, 0.1, 30),
    ];
    let cases: Vec<Case> = vec![
        (
            "the reviewer prefers 3 on both sides: 3 wins its pair",
            three.clone(),
            reviewed(&[2, 3], small_wins(3)),
            None,
            Some(3),
            Rule::Tournament,
        ),
        (
            "a reviewer preferring the big one makes it win, diff size notwithstanding",
            three.clone(),
            reviewed(&[2, 3], small_wins(2)),
            None,
            Some(2),
            Rule::Tournament,
        ),
        (
            "always A: every pair splits, so the smaller diff wins",
            three.clone(),
            reviewed(&[2, 3], always_a),
            None,
            Some(3),
            Rule::SmallerDiff,
        ),
        (
            "unparsable verdicts are ties too",
            three.clone(),
            reviewed(&[2, 3], |_, _| Side::None),
            None,
            Some(3),
            Rule::SmallerDiff,
        ),
        (
            "one verdict missing: a tie",
            three.clone(),
            vec![Judged {
                a: 2,
                b: 3,
                side: Side::A,
            }],
            None,
            Some(3),
            Rule::SmallerDiff,
        ),
        (
            "equal diffs: the lower cost",
            vec![e(1, true, 10, 0.5, 10), e(2, true, 10, 0.2, 20)],
            reviewed(&[1, 2], always_a),
            None,
            Some(2),
            Rule::LowerCost,
        ),
        (
            "equal diffs and costs: the earlier finish",
            vec![e(1, true, 10, 0.2, 30), e(2, true, 10, 0.2, 20)],
            reviewed(&[1, 2], always_a),
            None,
            Some(2),
            Rule::EarlierFinish,
        ),
        (
            "equal in everything: the lower number",
            vec![e(1, true, 10, 0.2, 20), e(2, true, 10, 0.2, 20)],
            reviewed(&[1, 2], always_a),
            None,
            Some(1),
            Rule::LowerNumber,
        ),
        (
            "one survivor wins without review",
            vec![e(1, false, 1, 0.0, 1), e(2, true, 100, 9.0, 99)],
            vec![],
            None,
            Some(2),
            Rule::OnlySurvivor,
        ),
        (
            "no survivor: the race failed",
            vec![e(1, false, 1, 0.0, 1), e(2, false, 1, 0.0, 1)],
            vec![],
            None,
            None,
            Rule::NoSurvivor,
        ),
        (
            "--first-green decides before anything else",
            three.clone(),
            reviewed(&[2, 3], small_wins(3)),
            Some(2),
            Some(2),
            Rule::FirstGreen,
        ),
        (
            "four survivors: 4 beats everyone, ties elsewhere do not matter",
            vec![
                e(1, true, 1, 0.1, 1),
                e(2, true, 2, 0.1, 2),
                e(3, true, 3, 0.1, 3),
                e(4, true, 400, 0.1, 4),
            ],
            reviewed(&[1, 2, 3, 4], |a, b| match (a, b) {
                (4, _) => Side::A,
                (_, 4) => Side::B,
                _ => Side::A,
            }),
            None,
            Some(4),
            Rule::Tournament,
        ),
        (
            "two tied at the top by wins: the smaller of those two, not of everyone",
            vec![
                e(1, true, 1, 0.1, 1),
                e(2, true, 50, 0.1, 2),
                e(3, true, 40, 0.1, 3),
            ],
            // 2 and 3 each beat 1; 2 v 3 splits.
            reviewed(&[1, 2, 3], |a, b| match (a, b) {
                (1, _) => Side::B,
                (_, 1) => Side::A,
                _ => Side::A,
            }),
            None,
            Some(3),
            Rule::SmallerDiff,
        ),
    ];
    for (name, entrants, judged, first_green, winner, rule) in cases {
        let decision = decide(&entrants, &judged, first_green);
        assert_eq!((decision.winner, decision.rule), (winner, rule), "{name}");
    }
}

#[test]
fn standings_count_pairs_won_lost_and_tied() {
    let entrants = vec![
        e(1, true, 1, 0.0, 1),
        e(2, true, 2, 0.0, 2),
        e(3, false, 0, 0.0, 3),
    ];
    let judged = reviewed(&[1, 2], |a, _| if a == 1 { Side::A } else { Side::B });
    let decision = decide(&entrants, &judged, None);
    assert_eq!(decision.survivors, vec![1, 2]);
    assert_eq!(
        decision.pairs,
        vec![PairOutcome {
            first: 1,
            second: 2,
            winner: Some(1)
        }]
    );
    assert_eq!(
        decision.standings,
        vec![
            Standing {
                number: 1,
                wins: 1,
                losses: 0,
                ties: 0
            },
            Standing {
                number: 2,
                wins: 0,
                losses: 1,
                ties: 0
            },
        ]
    );
}

#[test]
fn each_pair_is_judged_twice_with_the_sides_swapped() {
    assert_eq!(
        judgements_needed(&[1, 3, 4]),
        vec![(1, 3), (3, 1), (1, 4), (4, 1), (3, 4), (4, 3)]
    );
    assert!(judgements_needed(&[2]).is_empty());
}
