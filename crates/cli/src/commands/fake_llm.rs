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
        Some(path) => Script::from_path(path).map_err(|e| EngineError::invalid(e.to_string()))?,
        None => Script::builtin(),
    };
    let server = BoundServer::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, args.port)), script)
        .map_err(|e| EngineError::invalid(e.to_string()))?;
    printer::emit(&format!(
        "fake-llm listening: {}\nOpenAI chat completions at {}/chat/completions; recorded requests at http://{}/_fake/requests\n",
        server.base_url(),
        server.base_url(),
        server.local_addr()
    ))?;
    server
        .serve()
        .map_err(|e| EngineError::invalid(e.to_string()))?;
    Ok(exit::OK)
}
