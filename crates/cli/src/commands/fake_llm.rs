//! `ganger fake-llm`: the scripted model server in the foreground, until interrupted.

use crate::Outcome;
use crate::args::FakeLlmArgs;
use crate::exit;
use crate::printer;
use ganger_engine::EngineError;
use ganger_fake_llm::{BoundServer, Script};
use std::net::{Ipv4Addr, SocketAddr};

pub(crate) fn run(args: FakeLlmArgs) -> Outcome {
    let script = match &args.script {
        Some(path) => Script::from_path(path).map_err(|e| EngineError::invalid(one_line(&e)))?,
        None => Script::builtin(),
    };
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    let server = BoundServer::bind(address, script)
        .map_err(|e| EngineError::environment(format!("failed to listen on {address}"), e))?;
    printer::emit(&format!(
        "fake-llm listening: {}\nOpenAI chat completions at {}/chat/completions; recorded requests at http://{}/_fake/requests\n",
        server.base_url(),
        server.base_url(),
        server.local_addr()
    ))?;
    server
        .serve()
        .map_err(|e| EngineError::environment("the scripted model server stopped", e))?;
    Ok(exit::OK)
}

/// A script's error on one line, with what the TOML reader said (its own text spans lines,
/// with a drawing of the place).
fn one_line(error: &ganger_fake_llm::ScriptError) -> String {
    match error {
        ganger_fake_llm::ScriptError::Parse { source, .. } => {
            let message = source.message().trim().replace('\n', " ");
            format!("{error}: {message}")
        }
        other => match std::error::Error::source(other) {
            Some(source) => format!("{other}: {source}"),
            None => other.to_string(),
        },
    }
}
