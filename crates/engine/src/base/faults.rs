//! Fault injection for tests of races, in debug builds only: `GANGER_FAULT_PAUSE=POINT:MS`
//! makes the process sleep MS milliseconds when it reaches POINT, so a test can land another
//! command inside a window that is otherwise microseconds wide. Release builds compile it to
//! nothing.

/// Sleeps here when `GANGER_FAULT_PAUSE` names `point` (debug builds only).
pub(crate) fn pause(point: &str) {
    if !cfg!(debug_assertions) {
        return;
    }
    let Ok(spec) = std::env::var("GANGER_FAULT_PAUSE") else {
        return;
    };
    for entry in spec.split(',') {
        if let Some((name, ms)) = entry.split_once(':')
            && name == point
            && let Ok(ms) = ms.parse::<u64>()
        {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
    }
}
