//! Who is giving the orders: `--as NAME`, else `GANGER_COMMANDER` (an LLM supervisor passes
//! its session id), else the user name.

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
    format!("uid-{}", rustix::process::getuid().as_raw())
}
