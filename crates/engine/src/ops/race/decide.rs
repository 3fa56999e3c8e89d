//! The race's rule, as a pure function of its attempts' evidence and the reviewers' verdicts:
//! 1. only attempts whose checks pass stay in the race (one alone wins without review; none:
//!    the race failed);
//! 2. the survivors meet in a tournament of pairwise reviews, each pair judged twice with the
//!    sides swapped: an attempt wins a pair when both verdicts name it, a split is a tie; the
//!    most pairs won wins;
//! 3. ties go to the smaller diff (lines changed), then the lower cost, then the earlier
//!    finish (then the lower attempt number, so that the rule always decides).
//!
//! `--first-green` decides before any of this: the first attempt to pass wins at once.

use serde::Serialize;

/// What the rule reads of one attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Entrant {
    pub number: u32,
    /// Its last round ended done and every check passed.
    pub passed: bool,
    /// Lines added plus lines removed against its base.
    pub lines: u64,
    pub cost_usd: f64,
    /// When its last round ended (ms since the epoch).
    pub finished_at: Option<i64>,
}

/// Which side a reviewer preferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Side {
    A,
    B,
    /// No verdict that parses.
    None,
}

/// One judgement: attempt `a` shown as side A, `b` as side B.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    pub a: u32,
    pub b: u32,
    pub side: Side,
}

/// The rule that decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// `--first-green`: the first attempt to pass.
    FirstGreen,
    /// Only one attempt passed its checks.
    OnlySurvivor,
    /// It won the most pairs.
    Tournament,
    /// Tied on pairs won; the smaller diff.
    SmallerDiff,
    /// Tied on pairs and diff; the lower cost.
    LowerCost,
    /// Tied on pairs, diff and cost; the earlier finish.
    EarlierFinish,
    /// Tied on everything; the lower attempt number.
    LowerNumber,
    /// No attempt passed its checks: the race failed.
    NoSurvivor,
}

impl Rule {
    pub fn describe(self) -> &'static str {
        match self {
            Rule::FirstGreen => "--first-green: the first attempt to pass its checks",
            Rule::OnlySurvivor => "the only attempt whose checks passed (no review)",
            Rule::Tournament => "the most pairwise reviews won",
            Rule::SmallerDiff => "tied on reviews; the smaller diff (lines changed)",
            Rule::LowerCost => "tied on reviews and diff size; the lower cost",
            Rule::EarlierFinish => "tied on reviews, diff size and cost; the earlier finish",
            Rule::LowerNumber => "tied on everything; the lower attempt number",
            Rule::NoSurvivor => "no attempt passed its checks",
        }
    }
}

/// A pair's outcome: who won it (both verdicts agree), or a tie.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairOutcome {
    pub first: u32,
    pub second: u32,
    pub winner: Option<u32>,
}

/// How the race was decided.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub winner: Option<u32>,
    pub rule: Rule,
    /// The attempts whose checks passed.
    pub survivors: Vec<u32>,
    pub pairs: Vec<PairOutcome>,
    /// Pairs won, lost and tied, by attempt number (survivors only).
    pub standings: Vec<Standing>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Standing {
    pub number: u32,
    pub wins: u32,
    pub losses: u32,
    pub ties: u32,
}

/// The judgements a tournament of `survivors` needs: every pair, both ways round.
pub fn judgements_needed(survivors: &[u32]) -> Vec<(u32, u32)> {
    let mut needed = Vec::new();
    for (i, first) in survivors.iter().enumerate() {
        for second in &survivors[i + 1..] {
            needed.push((*first, *second));
            needed.push((*second, *first));
        }
    }
    needed
}

/// Decides the race. `first_green` is the attempt `--first-green` already chose, if any.
pub fn decide(entrants: &[Entrant], judged: &[Judged], first_green: Option<u32>) -> Decision {
    let survivors: Vec<u32> = entrants
        .iter()
        .filter(|e| e.passed)
        .map(|e| e.number)
        .collect();
    let decided = |winner, rule, pairs, standings| Decision {
        winner,
        rule,
        survivors: survivors.clone(),
        pairs,
        standings,
    };
    if let Some(first) = first_green {
        return decided(Some(first), Rule::FirstGreen, Vec::new(), Vec::new());
    }
    match survivors.as_slice() {
        [] => return decided(None, Rule::NoSurvivor, Vec::new(), Vec::new()),
        [only] => return decided(Some(*only), Rule::OnlySurvivor, Vec::new(), Vec::new()),
        _ => {}
    }
    let pairs = pair_outcomes(&survivors, judged);
    let standings = standings(&survivors, &pairs);
    let most = standings.iter().map(|s| s.wins).max().unwrap_or(0);
    let top: Vec<&Entrant> = entrants
        .iter()
        .filter(|e| {
            standings
                .iter()
                .any(|s| s.number == e.number && s.wins == most)
        })
        .collect();
    let (winner, rule) = break_ties(&top);
    decided(Some(winner), rule, pairs, standings)
}

fn pair_outcomes(survivors: &[u32], judged: &[Judged]) -> Vec<PairOutcome> {
    let chosen = |a: u32, b: u32| {
        judged
            .iter()
            .find(|j| j.a == a && j.b == b)
            .and_then(|j| match j.side {
                Side::A => Some(a),
                Side::B => Some(b),
                Side::None => None,
            })
    };
    judgements_needed(survivors)
        .chunks(2)
        .map(|both| {
            let (first, second) = both[0];
            let one = chosen(first, second);
            let other = chosen(second, first);
            PairOutcome {
                first,
                second,
                winner: if one == other { one } else { None },
            }
        })
        .collect()
}

fn standings(survivors: &[u32], pairs: &[PairOutcome]) -> Vec<Standing> {
    survivors
        .iter()
        .map(|&number| {
            let mine = pairs
                .iter()
                .filter(|p| p.first == number || p.second == number);
            let (mut wins, mut losses, mut ties) = (0, 0, 0);
            for pair in mine {
                match pair.winner {
                    Some(w) if w == number => wins += 1,
                    Some(_) => losses += 1,
                    None => ties += 1,
                }
            }
            Standing {
                number,
                wins,
                losses,
                ties,
            }
        })
        .collect()
}

/// What a tie is broken by, smaller first.
type TieKey = fn(&Entrant) -> f64;

/// The winner among `top` (attempts tied on pairs won, at least one) and the rule that
/// separated them.
fn break_ties(top: &[&Entrant]) -> (u32, Rule) {
    if let [only] = top {
        return (only.number, Rule::Tournament);
    }
    let keys: [(Rule, TieKey); 3] = [
        (Rule::SmallerDiff, |e| e.lines as f64),
        (Rule::LowerCost, |e| e.cost_usd),
        (Rule::EarlierFinish, |e| {
            e.finished_at.map_or(f64::INFINITY, |at| at as f64)
        }),
    ];
    let mut left: Vec<&Entrant> = top.to_vec();
    for (rule, key) in keys {
        let best = left.iter().map(|e| key(e)).fold(f64::INFINITY, f64::min);
        left.retain(|e| key(e) <= best);
        if let [only] = left.as_slice() {
            return (only.number, rule);
        }
    }
    let lowest = left.iter().map(|e| e.number).min().unwrap_or(top[0].number);
    (lowest, Rule::LowerNumber)
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
