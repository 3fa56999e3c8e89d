//! Fault injection for tests of races, in debug builds only: `GANGER_FAULT_PAUSE=POINT:MS`
//! makes the process sleep MS milliseconds when it reaches POINT, so a test can land another
//! command inside a window that is otherwise microseconds wide; `GANGER_FAULT_FAIL=POINT:N`
//! makes the step at POINT fail its first N times. Release builds compile it to nothing.

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

/// Whether the step at `point` fails this time, when `GANGER_FAULT_FAIL` names it as
/// `POINT:N`: its first N passes fail, the later ones go on (debug builds only). For a failure
/// of the environment that a test cannot time (a database answering an error mid-pass).
pub(crate) fn fails(point: &str) -> bool {
    use std::sync::atomic::{AtomicU32, Ordering};
    static PASSED: AtomicU32 = AtomicU32::new(0);
    if !cfg!(debug_assertions) {
        return false;
    }
    let Ok(spec) = std::env::var("GANGER_FAULT_FAIL") else {
        return false;
    };
    spec.split(',').any(|entry| {
        entry.split_once(':').is_some_and(|(name, times)| {
            name == point
                && times
                    .parse::<u32>()
                    .is_ok_and(|times| PASSED.fetch_add(1, Ordering::SeqCst) < times)
        })
    })
}
