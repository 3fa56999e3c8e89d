//! Who is giving the orders: `--as NAME`, else `GANGER_COMMANDER` (an LLM supervisor passes
//! its session id), else the user name (`USER`, `LOGNAME`, then the password database).

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
    }
}
