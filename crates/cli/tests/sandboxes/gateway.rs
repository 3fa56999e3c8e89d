//! A sandboxed round's model key stays at the gateway (docs/gateway.md): Claude Code in the
//! sandbox holds a placeholder, its shell finds no key in any environment or file it can
//! read, and the model still gets the real key with every request, through the gateway on the
//! host's loopback (shared network: bubblewrap's namespace, Docker's host network).

use crate::scenarios::{sent_text, setup, start};
use ganger_fake_llm::Script;

const SECRET: &str = "sk-sandboxed-0e5f3a9c-real";

/// Prints only what looks like a key or a placeholder, so that no output cap cuts it.
const DUMP: &str = "{ env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < \"$f\"; done; \
    grep -r -I -h -o -e 'ganger-placeholder-[0-9a-f]*' -e 'sk-sandboxed[-a-z0-9]*' \"$HOME\" /tmp; } 2>/dev/null \
    | grep -o -e 'ganger-placeholder-[0-9a-f]*' -e 'sk-sandboxed[-a-z0-9]*' | sort -u; echo DUMP''ED";

pub fn the_model_key_stays_at_the_gateway(sandbox: &str) {
    let test = format!("{sandbox}::the_model_key_stays_at_the_gateway");
    if !crate::engines::available(sandbox, &test) {
        return;
    }
    let d = crate::dialect::dialect("claude");
    let s = setup(d, sandbox, |_| {
        Script::new().turn(d.shell(DUMP)).text("DONE: looked")
    });
    let key_file = s.world.root().join("anthropic.key");
    std::fs::write(&key_file, format!("{SECRET}\n")).unwrap();
    let key = format!("anthropic={}", key_file.display());
    let report = start(&s, "g", "Look around.", &["--key", &key]);
    assert_eq!(report["status"], "done", "{report:#}");
    let requests = s.llm.requests();
    assert!(requests.len() >= 2, "{requests:?}");
    for request in &requests {
        assert_eq!(
            request.header("x-api-key"),
            Some(SECRET),
            "request {}",
            request.index
        );
    }
    let sent = sent_text(&s.llm);
    assert!(sent.contains("DUMPED"), "the shell never ran");
    assert!(
        sent.contains("ganger-placeholder-"),
        "no placeholder in the sandbox"
    );
    assert!(
        !sent.contains(SECRET),
        "the agent in {sandbox} could read the key"
    );
    assert_eq!(report["gateway"]["requests"], requests.len(), "{report:#}");
}
