//! `ganger mcp` on stdio: JSON-RPC messages one per line. A line that is not JSON is answered
//! with a JSON-RPC parse error (-32700, id `null`), as JSON-RPC 2.0 asks, and the session goes
//! on; a line longer than [`MAX_LINE`] is dropped and answered as an invalid request. Every
//! other line goes to the server as it came, and what the server writes goes out a line at
//! a time, so an answer of ours never lands inside one of its messages.

use rmcp::ServiceExt;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest line taken (as rmcp's own stdio transport).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// Serves `server` on this process's stdin and stdout until the client closes them.
pub async fn serve_stdio(server: crate::GangerMcp) -> Result<(), String> {
    serve_lines(server, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves `server` on `input` and `output`, a message a line.
pub async fn serve_lines<R, W>(server: crate::GangerMcp, input: R, output: W) -> Result<(), String>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (mut to_server, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, from_server) = tokio::io::duplex(64 * 1024);
    let (lines, mut outgoing) = mpsc::channel::<Vec<u8>>(64);
    let answers = lines.clone();
    let reader = tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            line.clear();
            match read_line(&mut input, &mut line).await {
                Ok(Line::Eof) | Err(_) => break,
                Ok(Line::TooLong) => {
                    let refusal = error_line(-32600, "the message is longer than 16 MiB");
                    if answers.send(refusal).await.is_err() {
                        break;
                    }
                }
                Ok(Line::Whole) => {
                    let text = line.trim_ascii();
                    if text.is_empty() {
                        continue;
                    }
                    if let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(text)
                        && matches!(
                            error.classify(),
                            serde_json::error::Category::Syntax | serde_json::error::Category::Eof
                        )
                    {
                        let refusal = error_line(-32700, &format!("Parse error: {error}"));
                        if answers.send(refusal).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    if to_server.write_all(text).await.is_err()
                        || to_server.write_all(b"\n").await.is_err()
                    {
                        break;
                    }
                }
            }
        }
        // The client closed its end: so does the server's input.
        let _ = to_server.shutdown().await;
    });
    let relay = tokio::spawn(async move {
        let mut from_server = BufReader::new(from_server);
        loop {
            let mut line = Vec::new();
            match from_server.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if lines.send(line).await.is_err() {
                        break;
                    }
                }
            }
        }
    });
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut line) = outgoing.recv().await {
            if !line.ends_with(b"\n") {
                line.push(b'\n');
            }
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    let running = server
        .serve((server_in, server_out))
        .await
        .map_err(|e| format!("failed to start the MCP session on stdio: {e}"))?;
    let ended = running
        .waiting()
        .await
        .map_err(|e| format!("the MCP session on stdio failed: {e}"));
    // Everything the server wrote goes out before the process ends.
    let _ = relay.await;
    reader.abort();
    let _ = writer.await;
    ended.map(|_| ())
}

/// A JSON-RPC error with no id, as a line.
fn error_line(code: i64, message: &str) -> Vec<u8> {
    let mut line = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

enum Line {
    Whole,
    TooLong,
    Eof,
}

/// Reads one line into `line` (without growing it past [`MAX_LINE`]: the rest of a longer
/// line is skipped).
async fn read_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    line: &mut Vec<u8>,
) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(if line.is_empty() && !too_long {
                Line::Eof
            } else if too_long {
                Line::TooLong
            } else {
                Line::Whole
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        if !too_long {
            if line.len() + take > MAX_LINE {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(&available[..take]);
            }
        }
        input.consume(take);
        if newline.is_some() {
            return Ok(if too_long { Line::TooLong } else { Line::Whole });
        }
    }
}
