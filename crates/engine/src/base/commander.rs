//! Who is giving the orders: `--as NAME`, else `GANGER_COMMANDER` (an LLM supervisor passes
//! its session id), else the user name (`USER`, `LOGNAME`, then the password database).

/// The longest commander name.
const MAX_NAME: usize = 200;

/// Checks a commander's name as given (`--as`, `GANGER_COMMANDER`): not empty, on one line,
/// without control characters, at most 200 bytes. Returns it trimmed.
pub fn check_commander_name(name: &str) -> Result<&str, String> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err("a commander's name may not be empty".into());
    }
    if trimmed.chars().any(char::is_control) {
        return Err(format!(
            "{name:?}: a commander's name is one line without control characters"
        ));
    }
    if trimmed.len() > MAX_NAME {
        return Err(format!(
            "a commander's name is at most {MAX_NAME} bytes; this one has {}",
            trimmed.len()
        ));
    }
    Ok(trimmed)
}

/// The commander's name.
pub fn commander(explicit: Option<&str>) -> String {
    if let Some(name) = explicit.filter(|n| !n.trim().is_empty()) {
        return name.trim().to_owned();
    }
    if let Ok(name) = std::env::var("GANGER_COMMANDER")
        && !name.trim().is_empty()
    {
        return name.trim().to_owned();
    }
    for var in ["USER", "LOGNAME"] {
        if let Ok(name) = std::env::var(var)
            && !name.is_empty()
        {
            return name;
        }
    }
    let uid = rustix::process::getuid().as_raw();
    user_name(uid).unwrap_or_else(|| format!("uid-{uid}"))
}

/// The name `/etc/passwd` gives `uid`.
fn user_name(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let id: u32 = fields.nth(1)?.parse().ok()?;
        (id == uid && !name.is_empty()).then(|| name.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_name_wins_and_root_is_found_by_uid() {
        assert_eq!(commander(Some(" alice ")), "alice");
        assert_eq!(user_name(0).as_deref(), Some("root"));
        assert_eq!(user_name(u32::MAX - 7), None);
        assert_eq!(check_commander_name(" bob "), Ok("bob"));
        for bad in ["", "  ", "a\nb", "a\u{1b}[2J", &"x".repeat(201)] {
            assert!(check_commander_name(bad).is_err(), "{bad:?}");
        }
    }
}
