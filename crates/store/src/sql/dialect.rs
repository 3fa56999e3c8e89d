//! What differs in the text of a statement between SQLite and PostgreSQL, and nothing else.
//! The shared statements are written once, in the SQL both accept: `?N` placeholders
//! (PostgreSQL's connection numbers them `$N` before it prepares them, [`numbered`]), `TRUE`
//! and `NOT flag` for booleans (SQLite reads them as 1 and 0), `CAST(... AS BIGINT)`,
//! `INSERT ... ON CONFLICT (...) DO UPDATE` for upserts, `RETURNING` and `IS NOT DISTINCT FROM`
//! (SQLite 3.35 and 3.39). What they do not share is here: looking into a JSON column, and
//! locking a row a statement is about to claim.

use std::borrow::Cow;

/// Which SQL a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// The value at `path` in the JSON held by the text column `column`, as SQL (NULL when
    /// it is not there): SQLite's `json_extract`, PostgreSQL's `#>>` on the text cast to jsonb.
    pub(crate) fn json_field(self, column: &str, path: &[&str]) -> String {
        match self {
            Dialect::Sqlite => format!("json_extract({column}, '$.{}')", path.join(".")),
            Dialect::Postgres => format!("({column}::jsonb #>> '{{{}}}')", path.join(",")),
        }
    }

    /// What follows a sub-select of the row an `UPDATE` claims: PostgreSQL skips a row
    /// another transaction is claiming (it is theirs) instead of waiting for it; SQLite has
    /// one writer at a time and nothing to add.
    pub(crate) fn skip_claimed(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE SKIP LOCKED",
        }
    }
}

/// `sql` with its `?N` placeholders written `$N`, as PostgreSQL takes them; quoted text is
/// left as it is.
pub(crate) fn numbered(sql: &str) -> Cow<'_, str> {
    if !sql.contains('?') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        let placeholder = c == '?' && !quoted && chars.peek().is_some_and(char::is_ascii_digit);
        out.push(if placeholder { '$' } else { c });
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_for_postgresql_outside_quotes() {
        assert_eq!(
            numbered("UPDATE t SET a = ?2, b = '?1' WHERE id = ?1 AND c = ?10"),
            "UPDATE t SET a = $2, b = '?1' WHERE id = $1 AND c = $10"
        );
        assert!(matches!(numbered("SELECT 1"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_json_field_is_read_in_each_dialect() {
        assert_eq!(
            Dialect::Sqlite.json_field("summary", &["tokens", "input"]),
            "json_extract(summary, '$.tokens.input')"
        );
        assert_eq!(
            Dialect::Postgres.json_field("j.detail", &["from"]),
            "(j.detail::jsonb #>> '{from}')"
        );
    }
}
