//! Runs the fake model server in the foreground, as `ganger fake-llm` will, for measuring
//! agent CLIs by hand: `cargo run -p ganger-fake-llm --example serve -- [--port P]
//! [--script FILE] [--fault NAME [--retry-after-ms N]]`. Prints the base URL once listening.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use ganger_fake_llm::{BoundServer, Fault, FaultSpec, Script};

#[expect(
    clippy::print_stdout,
    reason = "a foreground tool that reports where it listens"
)]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut port = 0;
    let mut script_path: Option<PathBuf> = None;
    let mut fault: Option<Fault> = None;
    let mut retry_after_ms = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or_else(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--port" => port = value.parse()?,
            "--script" => script_path = Some(value.into()),
            "--fault" => fault = Some(value.parse()?),
            "--retry-after-ms" => retry_after_ms = Some(value.parse()?),
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    let mut script = match script_path {
        Some(path) => Script::from_path(&path)?,
        None => Script::builtin(),
    };
    if let Some(fault) = fault {
        script = script.fault_every_request(FaultSpec {
            fault,
            retry_after_ms,
        });
    }
    let server = BoundServer::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)), script)?;
    println!("{}", server.base_url());
    server.serve()?;
    Ok(())
}
