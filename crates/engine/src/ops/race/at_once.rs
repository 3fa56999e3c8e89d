//! Work on several attempts at once (their starts, their cancels): each on a thread of its
//! own, with notices of its own, told in the attempts' order once every one has ended.

use crate::base::error::{EngineError, Result};
use crate::base::notice::{Notice, Notices};

/// Runs `each` for every attempt of `numbers` at once; each one's outcome in order, its
/// notices told first. The first error is returned after every one has ended.
pub(super) fn at_once<T: Send>(
    numbers: &[u32],
    notices: &mut dyn Notices,
    each: impl Fn(u32, &mut dyn Notices) -> Result<T> + Sync,
) -> Result<Vec<(u32, T)>> {
    let each = &each;
    let outcomes: Vec<(Result<T>, Vec<Notice>)> = std::thread::scope(|scope| {
        let threads: Vec<_> = numbers
            .iter()
            .map(|&number| {
                scope.spawn(move || {
                    let mut told = Vec::new();
                    let mut tell = |notice: Notice| told.push(notice);
                    (each(number, &mut tell), told)
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|thread| {
                thread.join().unwrap_or_else(|_| {
                    let died = EngineError::invalid("the work on an attempt panicked");
                    (Err(died), Vec::new())
                })
            })
            .collect()
    });
    let mut done = Vec::new();
    let mut first_error = None;
    for (&number, (outcome, told)) in numbers.iter().zip(outcomes) {
        told.into_iter().for_each(|notice| notices.notice(notice));
        match outcome {
            Ok(value) => done.push((number, value)),
            Err(e) => first_error = first_error.or(Some(e)),
        }
    }
    first_error.map_or(Ok(done), Err)
}
