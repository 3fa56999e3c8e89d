//! A reviewer's answer, in the documented form (docs/pipeline.md): a first line
//! `VERDICT: pass` or `VERDICT: fail`, then one finding per line as `path:line: text`. Blank
//! lines are ignored and a finding may carry a list bullet (`- `). Anything else (prose, a
//! missing verdict, a fail without findings) does not parse, and an answer that does not
//! parse counts as a fail, never a pass.

/// One finding: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub path: String,
    pub line: u32,
    pub text: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.text)
    }
}

/// What a review said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Review {
    Pass(Vec<Finding>),
    Fail(Vec<Finding>),
    /// The answer is not in the form; counts as a fail. Says what is wrong.
    Unparsed(String),
}

impl Review {
    pub fn passed(&self) -> bool {
        matches!(self, Review::Pass(_))
    }

    /// `pass` or `fail` (an unparsed answer is a fail).
    pub fn verdict(&self) -> &'static str {
        if self.passed() { "pass" } else { "fail" }
    }

    /// The findings as lines, or why the answer counted as a fail.
    pub fn lines(&self) -> Vec<String> {
        match self {
            Review::Pass(findings) | Review::Fail(findings) => {
                findings.iter().map(Finding::to_string).collect()
            }
            Review::Unparsed(why) => vec![format!("(the review did not parse: {why})")],
        }
    }
}

fn finding(line: &str) -> Option<Finding> {
    let line = line.strip_prefix("- ").unwrap_or(line).trim();
    let (path, rest) = line.split_once(':')?;
    let (number, text) = rest.split_once(':')?;
    let path = path.trim_matches('`');
    if path.is_empty() || path.contains(char::is_whitespace) {
        return None;
    }
    let number = number.trim();
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Some(Finding {
        path: path.to_owned(),
        line: number.parse().ok()?,
        text: text.to_owned(),
    })
}

/// Reads a reviewer's answer.
pub fn parse_review(answer: &str) -> Review {
    let mut lines = answer.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return Review::Unparsed("the answer is empty".into());
    };
    let verdict = first
        .split_once(':')
        .filter(|(key, _)| key.trim().eq_ignore_ascii_case("verdict"))
        .map(|(_, value)| value.trim().to_ascii_lowercase());
    let passed = match verdict.as_deref() {
        Some("pass") => true,
        Some("fail") => false,
        _ => {
            return Review::Unparsed(format!(
                "the first line is not `VERDICT: pass` or `VERDICT: fail`: {}",
                clip(first)
            ));
        }
    };
    let mut findings = Vec::new();
    for line in lines {
        match finding(line) {
            Some(found) => findings.push(found),
            None => {
                return Review::Unparsed(format!(
                    "a line is not a finding `path:line: text`: {}",
                    clip(line)
                ));
            }
        }
    }
    if passed {
        Review::Pass(findings)
    } else if findings.is_empty() {
        Review::Unparsed("a fail without any finding".into())
    } else {
        Review::Fail(findings)
    }
}

fn clip(line: &str) -> String {
    let clipped: String = line.chars().take(120).collect();
    if clipped.len() < line.len() {
        format!("{clipped}...")
    } else {
        clipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_and_a_fail_with_findings() {
        assert_eq!(parse_review("VERDICT: pass\n"), Review::Pass(Vec::new()));
        let review = parse_review(
            "\nverdict: FAIL\nsrc/lib.rs:12: the error is dropped\n- `tests/a.rs`:3: no assertion\n",
        );
        assert_eq!(
            review,
            Review::Fail(vec![
                Finding {
                    path: "src/lib.rs".into(),
                    line: 12,
                    text: "the error is dropped".into()
                },
                Finding {
                    path: "tests/a.rs".into(),
                    line: 3,
                    text: "no assertion".into()
                },
            ])
        );
        assert!(!review.passed());
        assert_eq!(review.lines()[0], "src/lib.rs:12: the error is dropped");
    }

    #[test]
    fn anything_else_is_unparsed_and_counts_as_a_fail() {
        for answer in [
            "",
            "Looks good to me!",
            "The verdict: pass",
            "VERDICT: passed",
            "VERDICT: pass\nAll good, nice work.",
            "VERDICT: fail",
            "VERDICT: fail\nsrc/lib.rs: no line number",
            "VERDICT: fail\nsrc/lib.rs:x: not a number",
            "VERDICT: fail\na path with spaces:3: text",
            "VERDICT: fail\nsrc/lib.rs:3:",
            "Summary first\nVERDICT: pass",
        ] {
            let review = parse_review(answer);
            assert!(
                matches!(review, Review::Unparsed(_)),
                "{answer:?}: {review:?}"
            );
            assert!(!review.passed(), "{answer:?}");
            assert_eq!(review.verdict(), "fail");
        }
    }

    #[test]
    fn a_pass_may_carry_remarks() {
        let review = parse_review("VERDICT: pass\nREADME.md:1: a typo\n");
        assert!(review.passed());
        assert_eq!(review.lines(), ["README.md:1: a typo"]);
    }
}
