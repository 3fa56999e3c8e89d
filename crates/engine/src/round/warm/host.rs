//! The warm host's life: start the task's agent in its warm mode, serve one turn at a time to the
//! round hosts that connect, and end (stopping the agent) when idle too long, when the agent
//! dies, when a cancelled turn does not end within the grace, or when asked to.

use super::agent::{HostEvent, WarmAgent, read_line_capped};
use super::dialect::{self, Pass, Seen, TurnDialect};
use super::paths::{bind, claim_name, info_path, log_path, new_marker, socket_path};
use super::registry::WarmAgentInfo;
use super::stop::{Stop, start_line, stop_line};
use super::turn::TurnRequest;
use crate::base::error::{EngineError, Result};
use crate::env::keys;
use crate::env::workspace::Workspace;
use crate::round::{Planned, RoundInput, warm_agent_command};
use ganger_agents::WarmProtocol;
use ganger_agents::acp::GANGER_KEY;
use ganger_agents::acp::protocol;
use ganger_agents::app_server;
use ganger_store::now_ms;
use serde_json::{Value, json};
use std::io::{BufReader, IsTerminal, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// How often an idle or busy host looks whether its repository is still there.
const LOOK_EVERY: Duration = Duration::from_secs(5);

/// How long the agent may take to start and answer `initialize`, or to load a session.
const START_LIMIT: Duration = Duration::from_secs(120);

/// The turn being served.
struct Turn {
    conn: UnixStream,
    /// What the protocol remembers of the turn.
    dialect: TurnDialect,
    /// When the prompt went to the agent (milliseconds since the epoch).
    started_ms: u64,
    session: String,
    policy: super::policy::Policy,
    round: u32,
    cancelled_at: Option<Instant>,
    /// The last running totals sent ([`TurnUsage::running_line`]).
    running: Option<Value>,
    /// The gateway's count when the turn began.
    gateway_before: Option<ganger_events::GatewayTally>,
}

/// Where the host reads a turn's tokens when the agent's answer does not hold them all
/// ([`ganger_agents::Adapter::warm_turn_usage`]): the agent and its environment.
struct TurnUsage {
    adapter: Option<&'static dyn ganger_agents::Adapter>,
    /// The count of the host's model gateway, when it holds the agent's key.
    gateway: Option<crate::round::gateway::GatewayCounter>,
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    /// How the host speaks to the agent.
    kind: WarmProtocol,
}

impl TurnUsage {
    /// The line that gives the turn's tokens, when the agent's own records tell them.
    fn line(&self, turn: &Turn) -> Option<Value> {
        let usage = self
            .adapter?
            .warm_turn_usage(&self.env, &turn.session, turn.started_ms)?;
        Some(
            json!({GANGER_KEY: "usage", "input": usage.input, "output": usage.output,
            "reasoning": usage.reasoning, "cache_read": usage.cache_read,
            "cache_write": usage.cache_write}),
        )
    }

    /// Sends the turn's tokens so far, read from the agent's records, when they changed since
    /// the last look (`running`: the reader takes them as the round's totals so far, and the
    /// round's budgets can stop it mid-turn; the agent's answer reports them only at the end).
    fn send_running(&self, turn: &mut Turn) {
        if turn.cancelled_at.is_some() {
            return;
        }
        let Some(mut line) = self.line(turn) else {
            return;
        };
        if line["input"] == 0 && line["output"] == 0 {
            return;
        }
        line["running"] = Value::Bool(true);
        if turn.running.as_ref() != Some(&line) {
            ganger_line(&mut turn.conn, line.clone());
            turn.running = Some(line);
        }
    }
}

/// How often a turn's tokens so far are read from the agent's records.
const RUNNING_USAGE_EVERY: Duration = Duration::from_secs(1);

/// Runs the warm host of `slug`, started for round `number`, until it ends. Its stdin holds
/// the agent configuration the round's process runs with (`identity`), when not a terminal.
/// `kept_by`: the pid of the `ganger serve` that started it and owns it ([`super::keeper`]).
/// SIGINT, SIGTERM or SIGHUP stop it as `ganger warm stop` does (its keeper's end sends
/// SIGTERM).
pub fn serve_warm_host(
    ws: &Workspace,
    slug: &str,
    number: u32,
    kept_by: Option<u32>,
) -> Result<()> {
    let mut handed = Vec::new();
    if !std::io::stdin().is_terminal() {
        std::io::stdin()
            .read_to_end(&mut handed)
            .map_err(|e| EngineError::environment("failed to read the warm host's input", e))?;
    }
    let store = ws.open_store()?;
    let claim = store.claim(&claim_name(ws, slug))?;
    let task = store
        .task(slug)?
        .ok_or_else(|| EngineError::not_found(format!("no task {slug}")))?;
    let round = store
        .round(task.id, Some(number))?
        .ok_or_else(|| EngineError::invalid(format!("task {slug} has no round {number}")))?;
    drop(store);
    let handed_ws = super::identity::with_handed_config(ws, &task.agent, &handed)?;
    let ws = &handed_ws;
    let input = RoundInput::new(ws, task.clone(), round, String::new());
    let keys = keys::load_keys(&ws.config, &task.keys)?;
    let token = new_marker(ws, slug);
    // The model's key stays at a gateway that lives as long as this host: the warm agent
    // holds a placeholder, as a cold round's agent does.
    let adapter = crate::env::agent_env::adapter_for(&task.agent, &ws.config);
    let gateway = match adapter {
        Some(adapter) => {
            let store = ws.open_store()?;
            crate::round::gateway::open(ws, &*store, adapter, &input, &keys, false)?
        }
        None => None,
    };
    let (agent_keys, redirect) = match &gateway {
        Some((_, redirect)) => (redirect.vars.clone(), Some(redirect)),
        None => (keys.clone(), None),
    };
    let Planned {
        command,
        session: planned_session,
        tmp,
    } = warm_agent_command(ws, &input, &agent_keys, &token, redirect)?;
    let (events, received) = mpsc::channel();
    watch_signals(events.clone())?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path(ws, slug))
        .map_err(|e| EngineError::io("open", &log_path(ws, slug), e))?;
    {
        let mut log = &log;
        let _ = writeln!(log, "{}", start_line(slug, number));
    }
    let mut agent = WarmAgent::start(&command, events.clone(), log)?;
    let usage = TurnUsage {
        adapter,
        gateway: gateway.as_ref().map(|(gateway, _)| gateway.counter()),
        env: command.env.clone(),
        kind: adapter.map_or(WarmProtocol::Acp, |a| a.warm_protocol()),
    };
    let (version, session) = match greet(&mut agent, usage.kind, &received, planned_session) {
        Ok(greeted) => greeted,
        Err((error, unable)) => {
            if unable {
                super::identity::remember_unable(ws, &task, number, &error.message);
            }
            // Nothing is left of a host that never served: not its agent, nor its claim's
            // file (a claim merely dropped stays behind, as a dead holder's does).
            agent.running.stop(input.grace);
            claim.release();
            return Err(error);
        }
    };
    super::identity::forget_unable(ws, &task);
    let socket = socket_path(ws, slug);
    let listener = bind(&socket)?;
    let accepting = listener
        .try_clone()
        .map_err(|e| EngineError::io("listen on", &socket, e))?;
    let sender = events.clone();
    std::thread::spawn(move || accept(accepting, sender));
    let mut info = WarmAgentInfo {
        slug: slug.to_owned(),
        agent: task.agent.clone(),
        model: input.round.model.clone(),
        host_pid: std::process::id(),
        agent_pid: agent.running.process.pid,
        token,
        socket: socket.clone(),
        protocol: version,
        session,
        started_ms: now_ms(),
        last_used_ms: now_ms(),
        turns: 0,
        busy: false,
        last_round: None,
        cost: None,
        fingerprint: super::identity::fingerprint(ws, &input),
        kept_by,
        kept_by_command: None,
        unreadable: None,
    };
    info.save(&info_path(ws, slug))?;
    let why = serve(
        ws,
        &mut agent,
        &received,
        &events,
        &mut info,
        &usage,
        input.grace,
    );
    if let Ok(mut log) = std::fs::OpenOptions::new()
        .append(true)
        .open(log_path(ws, slug))
    {
        let _ = writeln!(log, "{}", stop_line(slug, &why));
    }
    let _ = std::fs::remove_file(&socket);
    let _ = std::fs::remove_file(info_path(ws, slug));
    agent.running.stop(input.grace);
    // The agent is gone: so is its placeholder.
    drop(gateway);
    // What the agent's sandbox kept for it (a Docker container) goes with it.
    if let Ok(sandbox) = crate::env::sandboxing::TaskSandbox::of(ws, &task) {
        sandbox.after_round(&info.token);
    }
    // And its private temporary directory, before the claim's end tells anyone it is gone.
    drop(tmp);
    claim.release();
    Ok(())
}

/// Greets the agent as its protocol wants: an ACP agent or an app server is sent
/// `initialize` first; a stream-json one is spoken to only with the prompt, and its process is
/// in the session its command line named (`planned_session`). Returns the protocol's version
/// and the session; on an error, also whether the agent does not speak the protocol at all
/// (it refused the greeting, or exited instead of answering it).
fn greet(
    agent: &mut WarmAgent,
    kind: WarmProtocol,
    received: &Receiver<HostEvent>,
    planned_session: Option<String>,
) -> std::result::Result<(u64, Option<String>), (EngineError, bool)> {
    let (id, hello, refused) = match kind {
        WarmProtocol::StreamJsonControl => return Ok((0, planned_session)),
        WarmProtocol::Acp => {
            let id = agent.next_id();
            (
                id,
                protocol::initialize(id),
                "the agent refused ACP's initialize",
            )
        }
        WarmProtocol::AppServer => {
            let id = agent.next_id();
            (
                id,
                app_server::initialize(id),
                "the agent's app server refused initialize",
            )
        }
    };
    let answer = match agent.call(id, &hello, received, START_LIMIT) {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => {
            return Err((
                EngineError::environment_message(format!("{refused}: {e}")),
                true,
            ));
        }
        Err(error) => {
            // Its stdout closed first; it has exited or is about to. One killed by a signal
            // (the kernel's out-of-memory killer, a user) says nothing of what it speaks.
            let exited = matches!(
                agent.running.wait_timeout(Duration::from_secs(1), None),
                ganger_sandbox::Waited::Exited(exit) if exit.code.is_some()
            );
            return Err((error, exited));
        }
    };
    if kind == WarmProtocol::AppServer {
        agent
            .send(&app_server::initialized())
            .map_err(|e| (e, false))?;
        return Ok((0, None));
    }
    Ok((answer["protocolVersion"].as_u64().unwrap_or(0), None))
}

/// Turns the stop signals into an event of the host's loop, which then stops its agent and
/// ends as when asked to stop.
fn watch_signals(events: Sender<HostEvent>) -> Result<()> {
    let watch = crate::round::SignalWatch::install()
        .map_err(|e| EngineError::environment("failed to watch signals", e))?;
    std::thread::spawn(move || {
        use rustix::event::{PollFd, PollFlags, poll};
        loop {
            let fd = watch.fd();
            let mut fds = [PollFd::new(&fd, PollFlags::IN)];
            let _ = poll(&mut fds, None);
            if let Some(signal) = watch.received() {
                let _ = events.send(HostEvent::Signal(signal));
                return;
            }
        }
    });
    Ok(())
}

fn accept(listener: UnixListener, events: Sender<HostEvent>) {
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        if events.send(HostEvent::Connection(conn)).is_err() {
            return;
        }
    }
}

/// The host's loop; returns why it ended.
fn serve(
    ws: &Workspace,
    agent: &mut WarmAgent,
    received: &Receiver<HostEvent>,
    events: &Sender<HostEvent>,
    info: &mut WarmAgentInfo,
    usage: &TurnUsage,
    grace: Duration,
) -> Stop {
    let mut host = Serving {
        ws,
        agent,
        received,
        events,
        info,
        usage,
        grace,
        idle: ws.config.warm.idle.0,
        turn: None,
        last_used: Instant::now(),
    };
    loop {
        let step = match host.next_event() {
            Ok(Some(event)) => host.on_event(event),
            Ok(None) => Ok(()),
            Err(stop) => Err(stop),
        };
        if let Err(stop) = step {
            return stop;
        }
    }
}

/// The host's loop: what it serves with, the turn in progress, and when the agent last
/// ended one. Each step returns `Err` with why the host must stop.
struct Serving<'a> {
    ws: &'a Workspace,
    agent: &'a mut WarmAgent,
    received: &'a Receiver<HostEvent>,
    events: &'a Sender<HostEvent>,
    info: &'a mut WarmAgentInfo,
    usage: &'a TurnUsage,
    grace: Duration,
    idle: Duration,
    turn: Option<Turn>,
    last_used: Instant,
}

impl Serving<'_> {
    /// The next event, or `None` when none came in time and there is nothing to do yet.
    fn next_event(&mut self) -> std::result::Result<Option<HostEvent>, Stop> {
        // When the host must act unless something comes first: a cancelled turn's grace ends,
        // or the idle limit; a turn in progress has no deadline of the host's.
        let deadline = match &self.turn {
            Some(Turn {
                cancelled_at: Some(at),
                ..
            }) => Some(*at + self.grace),
            Some(_) => None,
            None => Some(self.last_used + self.idle),
        };
        let wait = deadline.map_or(LOOK_EVERY, |at| {
            at.saturating_duration_since(Instant::now()).min(LOOK_EVERY)
        });
        let wait = match &self.turn {
            Some(_) if self.usage.adapter.is_some() => wait.min(RUNNING_USAGE_EVERY),
            _ => wait,
        };
        match self.received.recv_timeout(wait) {
            Ok(event) => Ok(Some(event)),
            // A repository whose state went away (deleted, or its task cleaned) keeps no agent.
            Err(RecvTimeoutError::Timeout) if !self.ws.state.task_dir(&self.info.slug).is_dir() => {
                Err(Stop::Asked("its task's state directory is gone".into()))
            }
            Err(RecvTimeoutError::Timeout) if deadline.is_none_or(|at| Instant::now() < at) => {
                if let Some(current) = self.turn.as_mut() {
                    self.usage.send_running(current);
                }
                Ok(None)
            }
            Err(RecvTimeoutError::Timeout) => match self.turn.take() {
                Some(mut turn) => {
                    ganger_line(
                        &mut turn.conn,
                        json!({GANGER_KEY: "error",
                        "message": format!("the agent did not end its cancelled turn within {} s: stopped", self.grace.as_secs())}),
                    );
                    Err(Stop::Failed("a cancelled turn did not end".into()))
                }
                None => Err(Stop::Asked(format!(
                    "idle for {}",
                    crate::base::config::format_duration(self.idle)
                ))),
            },
            Err(RecvTimeoutError::Disconnected) => Err(Stop::Failed("its channel closed".into())),
        }
    }

    fn on_event(&mut self, event: HostEvent) -> std::result::Result<(), Stop> {
        match event {
            HostEvent::Connection(conn) => self.on_connection(conn),
            HostEvent::Agent(line) => self.on_agent(&line),
            HostEvent::AgentGone => {
                self.fail_turn("the warm agent exited during the turn");
                Err(Stop::Failed("the agent exited".into()))
            }
            HostEvent::Signal(signal) => {
                let why = format!("it was sent {}", crate::round::signal_name(signal));
                self.fail_turn(&format!("the warm host stopped: {why}"));
                Err(Stop::Asked(why))
            }
            HostEvent::Round(line) => {
                if line.trim() == "stop" && self.turn.is_none() {
                    return Err(Stop::Asked("asked to stop".into()));
                }
                match line.trim() == "cancel" {
                    true => self.cancel_turn(),
                    false => Ok(()),
                }
            }
            // The round host went away mid-turn (killed, or it stopped the round): the turn is
            // cancelled so that the session stays usable for the next round.
            HostEvent::RoundGone => self.cancel_turn(),
        }
    }

    /// A round host connected: its turn begins, unless one is in progress.
    fn on_connection(&mut self, mut conn: UnixStream) -> std::result::Result<(), Stop> {
        if self.turn.is_some() {
            ganger_line(
                &mut conn,
                json!({GANGER_KEY: "error", "busy": true, "message": "the warm agent is busy with another round"}),
            );
            return Ok(());
        }
        let kind = self.usage.kind;
        if let Some(started) = begin_turn(
            self.agent,
            self.received,
            self.events,
            conn,
            self.info,
            kind,
        )? {
            let mut started = started;
            started.gateway_before = self.usage.gateway.as_ref().map(|g| g.now());
            if let Some(gateway) = &self.usage.gateway {
                log_turn(self.ws, &self.info.slug, started.round, gateway);
            }
            self.turn = Some(started);
            self.info.busy = true;
            let _ = self.info.save(&info_path(self.ws, &self.info.slug));
        }
        Ok(())
    }

    /// A line of the agent's: passed to the turn in progress (which it may end), or answered
    /// as a request of an idle agent's.
    fn on_agent(&mut self, line: &[u8]) -> std::result::Result<(), Stop> {
        let Some(current) = self.turn.as_mut() else {
            if let Some(answer) = dialect::refuse_idle(self.usage.kind, line) {
                let _ = self.agent.send(&answer);
            }
            return Ok(());
        };
        if on_agent_line(self.agent, current, line, self.info, self.usage).map_err(Stop::Failed)? {
            if let Some(gateway) = &self.usage.gateway {
                gateway.log_to(None);
            }
            self.info.last_round = Some(current.round);
            self.turn = None;
            self.last_used = Instant::now();
            self.info.last_used_ms = now_ms();
            self.info.turns += 1;
            self.info.busy = false;
            let _ = self.info.save(&info_path(self.ws, &self.info.slug));
        }
        Ok(())
    }

    /// Asks the agent to cancel the turn in progress, once; its grace starts now.
    fn cancel_turn(&mut self) -> std::result::Result<(), Stop> {
        let Some(current) = self.turn.as_mut() else {
            return Ok(());
        };
        if current.cancelled_at.is_some() {
            return Ok(());
        }
        current.cancelled_at = Some(Instant::now());
        let id = self.agent.next_id();
        if let Some(cancel) = current.dialect.cancel(id, &current.session)
            && self.agent.send(&cancel).is_err()
        {
            return Err(Stop::Failed("the agent's stdin closed".into()));
        }
        Ok(())
    }

    /// Tells the round host of the turn in progress, if any, that it failed and why.
    fn fail_turn(&mut self, message: &str) {
        if let Some(mut current) = self.turn.take() {
            ganger_line(
                &mut current.conn,
                json!({GANGER_KEY: "error", "message": message}),
            );
        }
    }
}

/// Reads a round host's request and starts its turn; `Ok(None)` when the connection was not
/// a turn (a `stop`, which ends the host through its reader, or a broken request).
fn begin_turn(
    agent: &mut WarmAgent,
    received: &Receiver<HostEvent>,
    events: &Sender<HostEvent>,
    mut conn: UnixStream,
    info: &mut WarmAgentInfo,
    kind: WarmProtocol,
) -> std::result::Result<Option<Turn>, Stop> {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(match conn.try_clone() {
        Ok(read) => read,
        Err(_) => return Ok(None),
    });
    let mut first = Vec::new();
    if read_line_capped(&mut reader, &mut first).unwrap_or(0) == 0 {
        return Ok(None);
    }
    if first.trim_ascii() == b"stop" {
        return Err(Stop::Asked("asked to stop".into()));
    }
    let request: TurnRequest = match serde_json::from_slice(&first) {
        Ok(request) => request,
        Err(e) => {
            ganger_line(
                &mut conn,
                json!({GANGER_KEY: "error", "message": format!("a bad request: {e}")}),
            );
            return Ok(None);
        }
    };
    let _ = conn.set_read_timeout(None);
    // An ACP agent or an app server makes or loads the session; a stream-json one is in its
    // own.
    let chosen = match kind {
        WarmProtocol::Acp | WarmProtocol::AppServer => {
            ensure_session(agent, received, &request, info, kind)
        }
        WarmProtocol::StreamJsonControl => own_session(&request, info),
    };
    let session = match chosen {
        Ok(session) => session,
        Err(e) => {
            // Nothing ran: the round host runs the round cold instead.
            ganger_line(
                &mut conn,
                json!({GANGER_KEY: "refused", "message": e.message}),
            );
            return Ok(None);
        }
    };
    let cost_before = info
        .cost
        .filter(|_| info.session.as_deref() == Some(session.as_str()));
    ganger_line(
        &mut conn,
        json!({GANGER_KEY: "turn", "session": session, "warm": true,
        "round": request.round, "cost_before": cost_before, "agent_pid": info.agent_pid}),
    );
    let prompt_id = agent.next_id();
    let started_ms = u64::try_from(now_ms()).unwrap_or(0);
    if agent
        .send(&dialect::prompt(kind, prompt_id, &session, &request.prompt))
        .is_err()
    {
        return Err(Stop::Failed("the agent's stdin closed".into()));
    }
    let sender = events.clone();
    std::thread::spawn(move || read_round(reader, sender));
    Ok(Some(Turn {
        conn,
        dialect: TurnDialect::new(kind, prompt_id, &session),
        started_ms,
        session,
        policy: request.policy,
        round: request.round,
        cancelled_at: None,
        running: None,
        gateway_before: None,
    }))
}

/// The session the turn goes into: the live one when the round continues it, a loaded one
/// when it continues another (a cold round came in between), a new one when it names none.
fn ensure_session(
    agent: &mut WarmAgent,
    received: &Receiver<HostEvent>,
    request: &TurnRequest,
    info: &mut WarmAgentInfo,
    kind: WarmProtocol,
) -> Result<String> {
    // The live session serves the round that follows its last turn; after a round elsewhere
    // (cold, or in an earlier warm host) it is loaded again, so that the agent sees that
    // round too.
    if let (Some(wanted), Some(live)) = (&request.session, &info.session)
        && wanted == live
        && info
            .last_round
            .is_some_and(|last| last + 1 == request.round)
    {
        return Ok(live.clone());
    }
    if let Some(session) = &request.session
        && !request.can_load
    {
        return Err(EngineError::environment_message(format!(
            "the warm agent cannot load session {session} (it is not its live one)"
        )));
    }
    let id = agent.next_id();
    let worktree = &request.policy.worktree;
    let message = match (&request.session, kind) {
        (Some(session), WarmProtocol::AppServer) => {
            app_server::thread_resume(id, session, worktree)
        }
        (None, WarmProtocol::AppServer) => app_server::thread_start(id, worktree),
        (Some(session), _) => protocol::load_session(id, session, worktree),
        (None, _) => protocol::new_session(id, worktree),
    };
    let answer = agent
        .call(id, &message, received, START_LIMIT)?
        .map_err(|e| match &request.session {
            Some(session) => EngineError::environment_message(format!(
                "the agent could not load session {session}: {e}"
            )),
            None => EngineError::environment_message(format!(
                "the agent could not start a session: {e}"
            )),
        })?;
    let session = match &request.session {
        Some(session) => session.clone(),
        None => match kind {
            WarmProtocol::AppServer => app_server::thread_of(&answer),
            _ => answer["sessionId"].as_str().map(str::to_owned),
        }
        .ok_or_else(|| EngineError::environment_message("the agent's new session has no id"))?,
    };
    info.session = Some(session.clone());
    info.cost = None;
    Ok(session)
}

/// The session of an agent that cannot change sessions (its process was started in one):
/// the turn goes into it when the round continues it (right after its last turn, or as the
/// process's first turn), or starts the new session it was started with.
fn own_session(request: &TurnRequest, info: &WarmAgentInfo) -> Result<String> {
    let live = info.session.as_deref().unwrap_or_default();
    let fresh = info.turns == 0;
    let serves = match &request.session {
        Some(wanted) => {
            wanted == live
                && (fresh
                    || info
                        .last_round
                        .is_some_and(|last| last + 1 == request.round))
        }
        None => fresh && !live.is_empty(),
    };
    if serves {
        Ok(live.to_owned())
    } else {
        Err(EngineError::environment_message(format!(
            "the warm agent is in session {live}, which this round does not continue"
        )))
    }
}

fn read_round(mut reader: BufReader<UnixStream>, events: Sender<HostEvent>) {
    loop {
        let mut line = Vec::new();
        match read_line_capped(&mut reader, &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line).into_owned();
                if events.send(HostEvent::Round(text)).is_err() {
                    return;
                }
            }
        }
    }
    let _ = events.send(HostEvent::RoundGone);
}

/// One line of the agent during a turn: passed on (when it belongs in the round's stream),
/// and answered when it asks; `Ok(true)` when it ended the turn.
fn on_agent_line(
    agent: &mut WarmAgent,
    turn: &mut Turn,
    line: &[u8],
    info: &mut WarmAgentInfo,
    usage: &TurnUsage,
) -> std::result::Result<bool, String> {
    let (seen, pass) = turn.dialect.see(line);
    // The turn's tokens go just before the answer that ends it.
    if matches!(seen, Seen::TurnEnded { answered: true })
        && let Some(tokens) = usage.line(turn)
    {
        ganger_line(&mut turn.conn, tokens);
    }
    // And the gateway's count of the turn, the round's second source, whatever its end.
    if matches!(seen, Seen::TurnEnded { .. })
        && let (Some(counter), Some(before)) = (&usage.gateway, &turn.gateway_before)
    {
        let mut line = serde_json::to_value(counter.now().since(before)).unwrap_or_default();
        line[GANGER_KEY] = json!("gateway");
        ganger_line(&mut turn.conn, line);
    }
    match pass {
        Pass::Line => pass_on(&mut turn.conn, line),
        Pass::Nothing => {}
        Pass::Lines(lines) => {
            for line in lines {
                ganger_line(&mut turn.conn, line);
            }
        }
    }
    let answer = match seen {
        Seen::Ask(ask, asker) => {
            let decision = turn.policy.decide(&ask);
            if decision.allow {
                turn.dialect.allowed(&ask, &turn.policy.worktree);
            }
            ganger_line(
                &mut turn.conn,
                json!({GANGER_KEY: "permission", "tool": ask.tool,
                "kind": ask.kind, "input": ask.input, "paths": ask.paths,
                "decision": if decision.allow { "allow" } else { "deny" }, "rule": decision.rule}),
            );
            dialect::answer(&asker, &ask, &decision)
        }
        Seen::Reply(answer) => answer,
        Seen::Cost(cost) => {
            info.cost = Some(cost);
            return Ok(false);
        }
        Seen::TurnEnded { .. } => {
            let _ = turn.conn.shutdown(std::net::Shutdown::Both);
            if turn.cancelled_at.is_some() && turn.dialect.cancel_leaves_work() {
                return Err("its cancelled turn may have left a command running".into());
            }
            return Ok(true);
        }
        Seen::Other => return Ok(false),
    };
    agent
        .send(&answer)
        .map(|()| false)
        .map_err(|_| "the agent's stdin closed".to_owned())
}

fn pass_on(conn: &mut UnixStream, line: &[u8]) {
    let _ = conn.write_all(line).and_then(|()| conn.write_all(b"\n"));
}

fn ganger_line(conn: &mut UnixStream, value: Value) {
    pass_on(conn, value.to_string().as_bytes());
}

/// Sends the host's gateway records to the gateway stream of round `number` of `slug`, the
/// turn just begun (a store that cannot be read leaves them counted but not logged).
fn log_turn(
    ws: &Workspace,
    slug: &str,
    number: u32,
    gateway: &crate::round::gateway::GatewayCounter,
) {
    let Ok(store) = ws.open_store() else { return };
    let Ok(Some(task)) = store.task(slug) else {
        return;
    };
    let Ok(Some(round)) = store.round(task.id, Some(number)) else {
        return;
    };
    let stream = ganger_store::RoundStream::of(&task, &round, ganger_store::StreamKind::Gateway);
    gateway.log_to(Some((&*store, &stream)));
}
