//! Reading scripts from TOML: the documented example, and the errors for scripts that break
//! the rules.

use std::path::Path;

use ganger_fake_llm::{Fault, FaultSpec, Script, ScriptError, Turn};
use serde_json::json;

/// The first ```toml block of docs/fake-llm.md.
fn documented_example() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/fake-llm.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let start = doc.find("```toml\n").unwrap() + "```toml\n".len();
    let end = start + doc[start..].find("```").unwrap();
    doc[start..end].to_owned()
}

#[test]
fn the_documented_example_reads_as_the_same_script_as_the_builders() {
    let expected = Script::new()
        .default_answer("Scripted session title")
        .turn(
            Turn::tool(
                "write",
                json!({"filePath": "hello.txt", "content": "hello\n"}),
            )
            .when("(?i)create"),
        )
        .text("Done round 1. {{history}}")
        .turn(
            Turn::fault(Fault::Http500)
                .when("(?i)edit")
                .times(2)
                .retry_after_ms(0),
        )
        .tool(
            "edit",
            json!({"filePath": "hello.txt", "oldString": "hello", "newString": "hello, world"}),
        )
        .text("Done round 2. {{history}}");
    assert_eq!(
        Script::from_toml_str(&documented_example()).unwrap(),
        expected
    );
}

#[test]
fn top_level_fault_and_defaults() {
    let script =
        Script::from_toml_str("fault = \"http-429\"\nretry_after_ms = 250\nrepeat = true\n")
            .unwrap();
    assert_eq!(
        script,
        Script::new()
            .repeat(true)
            .fault_every_request(FaultSpec::new(Fault::Http429).retry_after_ms(250))
    );
    assert_eq!(Script::from_toml_str("").unwrap(), Script::new());
    let tool = Script::from_toml_str("[[turns]]\ntool = \"bash\"\n").unwrap();
    assert_eq!(tool, Script::new().tool("bash", json!({})));
}

#[test]
fn every_fault_name_reads() {
    for fault in Fault::ALL {
        let text = format!("[[turns]]\nfault = \"{fault}\"\n");
        assert_eq!(
            Script::from_toml_str(&text).unwrap(),
            Script::new().fault(fault)
        );
        assert_eq!(fault.name().parse::<Fault>(), Ok(fault));
    }
}

#[test]
fn scripts_that_break_the_rules_are_refused_with_the_turn_named() {
    let cases = [
        (
            "[[turns]]\ntext = \"a\"\ntool = \"b\"\n",
            "invalid script: turns[0]: a turn needs exactly one of `text`, `tool` and `fault`",
        ),
        (
            "[[turns]]\nwhen = \"x\"\n",
            "invalid script: turns[0]: a turn needs exactly one of `text`, `tool` and `fault`",
        ),
        (
            "[[turns]]\ntext = \"a\"\n[[turns]]\nfault = \"boom\"\n",
            "invalid script: turns[1]: unknown fault \"boom\"; expected one of http-401, http-429, http-500, hang, cut, garbage",
        ),
        (
            "[[turns]]\ntext = \"a\"\ntimes = 2\n",
            "invalid script: turns[0]: `times` is only for fault turns",
        ),
        (
            "[[turns]]\ntool = \"a\"\nretry_after_ms = 2\n",
            "invalid script: turns[0]: `retry_after_ms` is only for fault turns",
        ),
        (
            "[[turns]]\ntext = \"a\"\narguments = {}\n",
            "invalid script: turns[0]: `arguments` is only for tool turns",
        ),
        (
            "[[turns]]\nfault = \"hang\"\nretry_after_ms = 0\n",
            "invalid script: turns[0]: `retry_after_ms` only applies to http-429 and http-500, not hang",
        ),
        (
            "[[turns]]\nfault = \"cut\"\ntimes = 0\n",
            "invalid script: turns[0]: `times` must be at least 1",
        ),
        (
            "[[turns]]\nfault = \"cut\"\n[[turns]]\ntext = \"never\"\n",
            "invalid script: turns[0]: fault cut has no `times`, so it never ends and the turns after it could never be used; give it `times` or make it the last turn",
        ),
        (
            "[[turns]]\ntool = \"\"\n",
            "invalid script: turns[0]: a tool call needs a tool name",
        ),
        (
            "[[turns]]\ntool = \"write\"\narguments = [1]\n",
            "invalid script: turns[0]: the arguments of tool \"write\" must be a table (a JSON object) or a string (the raw input of a custom tool)",
        ),
        (
            "retry_after_ms = 5\n",
            "invalid script: top-level `retry_after_ms` needs a top-level `fault`",
        ),
        (
            "fault = \"garbage\"\nretry_after_ms = 5\n",
            "invalid script: `retry_after_ms` only applies to http-429 and http-500, not garbage",
        ),
        (
            "[[turns]]\ntext = \"a\"\nwhen = \"(\"\n",
            "invalid script: turns[0]: `when` is not a valid regular expression",
        ),
    ];
    for (text, expected) in cases {
        let error = Script::from_toml_str(text).unwrap_err();
        assert_eq!(error.to_string(), expected, "{text}");
    }
}

#[test]
fn unknown_keys_and_bad_toml_are_parse_errors_with_the_origin() {
    for text in [
        "defualt = \"x\"\n",
        "[[turns]]\ntext = \"a\"\nwhne = \"b\"\n",
        "turns = 3\n",
        "= broken",
    ] {
        let error = Script::from_toml_str(text).unwrap_err();
        assert!(
            matches!(error, ScriptError::Parse { .. }),
            "{text}: {error:?}"
        );
        assert_eq!(error.to_string(), "failed to parse script <string>");
    }
}

#[test]
fn reading_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.toml");
    std::fs::write(&path, "[[turns]]\ntext = \"from a file\"\n").unwrap();
    assert_eq!(
        Script::from_path(&path).unwrap(),
        Script::new().text("from a file")
    );
    let missing = dir.path().join("missing.toml");
    let error = Script::from_path(&missing).unwrap_err();
    assert!(matches!(error, ScriptError::Read { .. }));
    assert_eq!(
        error.to_string(),
        format!("failed to read script {}", missing.display())
    );
    std::fs::write(&path, "nope").unwrap();
    assert_eq!(
        Script::from_path(&path).unwrap_err().to_string(),
        format!("failed to parse script {}", path.display())
    );
}
