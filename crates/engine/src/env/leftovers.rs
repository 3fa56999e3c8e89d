//! What a round can leave behind outside git, and removing it: processes (found by the round
//! marker) and Docker containers and volumes (found by ganger's labels). Docker is touched
//! only when its socket exists, and only for rounds or tasks actually being cleaned, so that
//! the common path (`status` over thousands of tasks) never waits on a daemon.

use crate::env::workspace::Workspace;
use ganger_docker::{Docker, LabelFilter};

/// Docker, when its socket exists: `None` when there is no socket (nothing is said about
/// Docker then), `Some(Err(why))` when the socket is there but no daemon answers.
pub(crate) fn docker_if_present() -> Option<Result<Docker, String>> {
    if !std::path::Path::new(&ganger_docker::socket_path()).exists() {
        return None;
    }
    Some(Docker::connect().map_err(|e| e.to_string()))
}

/// The label filter for a task's objects in this repository.
pub(crate) fn task_filter(ws: &Workspace, slug: &str) -> LabelFilter {
    LabelFilter {
        repo: Some(ws.repo.main.to_string_lossy().into_owned()),
        task: Some(slug.to_owned()),
        token: None,
    }
}

/// Removes the containers of one round (by its token); returns how many, or why it could not.
/// Does nothing, quickly, when there is no Docker socket.
pub(crate) fn remove_round_containers(token: &str) -> Result<usize, String> {
    let Some(docker) = docker_if_present() else {
        return Ok(0);
    };
    let docker = docker?;
    let filter = LabelFilter {
        repo: None,
        task: None,
        token: Some(token.to_owned()),
    };
    let found = docker
        .managed_containers(&filter)
        .map_err(|e| e.to_string())?;
    for container in &found {
        docker
            .remove_container(&container.id)
            .map_err(|e| e.to_string())?;
    }
    Ok(found.len())
}
