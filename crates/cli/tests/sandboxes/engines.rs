//! Whether a sandbox's engine is here: bubblewrap's program, Docker's daemon. Under
//! `CI=true` a missing one fails the test (CI installs both); elsewhere the test is skipped
//! and says so by name.

fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

fn bwrap_here() -> bool {
    std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--", "/bin/true"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// How many containers, running or not, carry the label `label` (`key=value`).
pub fn containers_labelled(label: &str) -> usize {
    let out = std::process::Command::new("docker")
        .args(["ps", "-aq", "--filter", &format!("label={label}")])
        .output()
        .expect("docker ps");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// A running container's configuration, as Docker keeps it on disk, holds the round's marker
/// but not the key `key` (it reaches the container through a file on /dev/shm instead).
pub fn assert_no_key_in_container(name: &str, key: &str) {
    let out = std::process::Command::new("docker")
        .args(["inspect", "--format", "{{json .Config.Env}} {{.Id}}", name])
        .output()
        .expect("docker inspect");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("GANGER_ROUND="), "{text}");
    assert!(
        !text.contains(key),
        "the key is in the container's Env: {text}"
    );
    let id = text.split_whitespace().last().unwrap_or_default();
    let on_disk = format!("/var/lib/docker/containers/{id}/config.v2.json");
    if let Ok(config) = std::fs::read_to_string(&on_disk) {
        assert!(!config.contains(key), "the key is in {on_disk}");
    }
}

/// Whether `sandbox` can run here; panics on CI when it cannot.
pub fn available(sandbox: &str, test: &str) -> bool {
    let here = match sandbox {
        "bwrap" => bwrap_here(),
        // Says "skipped" itself, and panics on CI.
        "docker" => return ganger_test_support::docker_available(test),
        _ => true,
    };
    if !here {
        assert!(
            !on_ci(),
            "{test}: the {sandbox} sandbox's engine is missing on CI"
        );
        let mut err = std::io::stderr();
        let _ = std::io::Write::write_all(
            &mut err,
            format!("skipped: {test}: {sandbox} is not available here\n").as_bytes(),
        );
    }
    here
}
