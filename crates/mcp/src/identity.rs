//! Who the server acts as: `--as NAME` or `GANGER_COMMANDER` when the configuration names one
//! (the front end decides), else a name derived from the client that connected (its
//! `clientInfo.name`, e.g. `claude-code`), so that two supervisors of one repository are two
//! commanders without configuration.

/// The longest name taken from a client.
const MAX_CLIENT_NAME: usize = 64;

/// A commander's name made of a client's self-reported name: its letters, digits and `-_.`
/// (others become `-`), at most 64 of them; `mcp` for a client that gave none.
pub fn commander_from_client(client: &str) -> String {
    let name: String = client
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(MAX_CLIENT_NAME)
        .collect();
    let name = name.trim_matches('-');
    if name.is_empty() {
        "mcp".to_owned()
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_names_become_commander_names() {
        assert_eq!(commander_from_client("claude-code"), "claude-code");
        assert_eq!(commander_from_client("  My Client/2 "), "My-Client-2");
        assert_eq!(commander_from_client("\u{1b}[2J"), "2J");
        assert_eq!(commander_from_client(""), "mcp");
        assert_eq!(commander_from_client(&"x".repeat(100)).len(), 64);
    }
}
