//! Task slugs: `[a-z0-9][a-z0-9-]{0,47}`. A slug names a directory, a branch and refs, so
//! nothing else is accepted (no dots, slashes or upper case: no path traversal, no surprises).

use crate::base::error::{EngineError, Result};

/// The longest slug.
pub const MAX_SLUG: usize = 48;

/// Checks a slug.
pub fn check_slug(slug: &str) -> Result<()> {
    let bytes = slug.as_bytes();
    let first_ok = bytes
        .first()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let rest_ok = bytes
        .iter()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-');
    if first_ok && rest_ok && bytes.len() <= MAX_SLUG {
        Ok(())
    } else {
        Err(EngineError::invalid(format!(
            "invalid slug {slug:?}: use lower-case letters, digits and dashes, starting with a letter or digit, at most {MAX_SLUG} characters"
        )))
    }
}

/// Checks the name of a task to look up: a slug, or a role's task `SLUG.ROLE` (made by the
/// pipeline: a dot can never be in a slug a person gives, so the two never collide).
pub fn check_task_name(name: &str) -> Result<()> {
    match name.split_once('.') {
        Some((slug, role)) if crate::base::config::roles::valid_role_name(role) => check_slug(slug),
        _ => check_slug(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_checked() {
        for good in ["a", "fix-typo", "0day", &"x".repeat(48)] {
            assert!(check_slug(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "-x",
            "Fix",
            "a/b",
            "../x",
            "a.b",
            "a b",
            &"x".repeat(49),
            "é",
        ] {
            assert!(check_slug(bad).is_err(), "{bad}");
        }
        assert!(check_task_name("fix-typo.planner").is_ok());
        assert!(check_task_name("fix-typo").is_ok());
        for bad in ["a.b.c", "a.", ".planner", "a/b.planner", "a.Planner"] {
            assert!(check_task_name(bad).is_err(), "{bad}");
        }
    }
}
