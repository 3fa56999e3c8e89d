//! The steps of a plan: the planner answers in Markdown, and its numbered steps are what the
//! executor is given one at a time.
//!
//! A step starts at a line `N. text`, `N) text` or `N: text`, indented by at most three
//! spaces, optionally after a heading's `#`s, bold `**` or the word `Step`; the first step is
//! `1` and each next one the number after it. A step runs until the next step, a heading, or
//! a line that is not indented after a blank line; a later list that starts again at 1 (the
//! risks, say) is not part of the steps. Text inside code fences never starts a step.

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub number: u32,
    /// The step's text, its first line and the lines that continue it.
    pub text: String,
}

/// The number and text of a line that opens a list item `N.`, `N)`, `N:`.
fn numbered(line: &str) -> Option<(u32, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let mut rest = line.trim_start();
    rest = rest.trim_start_matches('#').trim_start();
    rest = rest.trim_start_matches("**");
    for word in ["Step ", "step ", "STEP "] {
        if let Some(after) = rest.strip_prefix(word) {
            rest = after;
        }
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 4 {
        return None;
    }
    let number: u32 = rest[..digits].parse().ok()?;
    let after = &rest[digits..];
    let after = after
        .strip_prefix('.')
        .or_else(|| after.strip_prefix(')'))
        .or_else(|| after.strip_prefix(':'))?;
    let after = after.trim_start_matches("**");
    if !after.is_empty() && !after.starts_with(char::is_whitespace) {
        return None;
    }
    let text = after.trim();
    (!text.is_empty()).then_some((number, text))
}

/// The plan's steps, in order; empty when it has none.
pub fn parse_steps(plan: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut open = false;
    let mut blank_before = false;
    let mut fenced = false;
    for line in plan.lines() {
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            fenced = !fenced;
            if open {
                push_line(&mut steps, line);
            }
            continue;
        }
        if fenced {
            if open {
                push_line(&mut steps, line);
            }
            continue;
        }
        if let Some((number, text)) = numbered(line) {
            let next = steps.last().map_or(1, |s| s.number + 1);
            if number == next {
                steps.push(Step {
                    number,
                    text: text.to_owned(),
                });
                open = true;
                blank_before = false;
                continue;
            }
            if !steps.is_empty() {
                // A second list: the steps are over.
                break;
            }
            continue;
        }
        if line.trim().is_empty() {
            blank_before = true;
            continue;
        }
        let heading = line.trim_start().starts_with('#');
        let indented = line.starts_with("  ") || line.starts_with('\t');
        if heading || (blank_before && !indented) {
            open = false;
        } else if open {
            if blank_before {
                push_line(&mut steps, "");
            }
            push_line(&mut steps, line.trim());
        }
        blank_before = false;
    }
    steps
}

fn push_line(steps: &mut [Step], line: &str) {
    if let Some(step) = steps.last_mut() {
        step.text.push('\n');
        step.text.push_str(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers_and_heads(plan: &str) -> Vec<(u32, String)> {
        parse_steps(plan)
            .into_iter()
            .map(|s| (s.number, s.text.lines().next().unwrap_or("").to_owned()))
            .collect()
    }

    #[test]
    fn numbered_lines_are_steps_with_their_continuations() {
        let plan = "Add a greeting.\n\n1. Create hello.txt\n   with one line.\n2) Add a test\n\nRisks: none.\n";
        let steps = parse_steps(plan);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].text, "Create hello.txt\nwith one line.");
        assert_eq!(steps[1].text, "Add a test");
    }

    #[test]
    fn headings_bold_and_the_word_step_are_accepted() {
        let plan = "## Step 1: Parse\nread it\n## Step 2: Print\n\n**3.** Test it\n";
        assert_eq!(
            numbers_and_heads(plan),
            [
                (1, "Parse".to_owned()),
                (2, "Print".to_owned()),
                (3, "Test it".to_owned())
            ]
        );
    }

    #[test]
    fn a_later_list_and_fenced_code_are_not_steps() {
        let plan = "```\n1. not a step\n```\n1. First\n2. Second\n\nRisks:\n1. a risk\n3. more\n";
        assert_eq!(
            numbers_and_heads(plan),
            [(1, "First".to_owned()), (2, "Second".to_owned())]
        );
    }

    #[test]
    fn numbers_must_start_at_one_and_follow_on() {
        assert!(parse_steps("2. Second\n3. Third\n").is_empty());
        assert_eq!(parse_steps("1. One\n3. Three\n").len(), 1);
        assert!(parse_steps("no steps here\n- a bullet\n").is_empty());
        // A version number or a date is not a step.
        assert!(parse_steps("1.18.33 is the version\n2026-11-30\n").is_empty());
    }

    #[test]
    fn deep_indentation_is_a_continuation_not_a_step() {
        let steps = parse_steps("1. One\n    1. nested\n2. Two\n");
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].text, "One\n1. nested");
    }
}
