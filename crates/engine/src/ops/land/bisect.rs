//! A batch's decisions, pure: which of the batch's tasks to test together next, and, once
//! known, what lands and who the culprits are.
//!
//! The batch is in the queue's order, and a task is judged on top of the tasks ahead of it that
//! land, as landing them one by one in that order would (GitHub's merge queue judges a pull
//! request the same way). So every test is of a prefix of the batch: a green prefix stays
//! green, and the first task whose prefix is red is a culprit. The first test is the whole
//! batch (most batches are green: one run). A red batch is bisected between the longest prefix
//! known green and the shortest known red; once a culprit is found and taken out, the rest is
//! searched the same way, "none left" being one more outcome of the search, so a batch of n
//! with k culprits takes about 1 + k·log2(n) runs. A first task red on its own asks for the base
//! itself to be tested once, so that a base whose checks fail does not send the whole queue
//! back.

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// Test the first `n` tasks of [`Bisection::items`] on the base.
    Test(usize),
    /// Test the base alone.
    TestBase,
    /// The base fails its checks by itself: nothing can be judged on it.
    BaseRed,
    /// Done: these land (in order), these are the culprits (in the order found).
    Land { land: Vec<i64>, culprits: Vec<i64> },
}

/// Where a batch's search stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bisection {
    items: Vec<i64>,
    /// The longest prefix known green (0: the base, assumed green).
    green: usize,
    /// The shortest prefix known red, if any.
    red: Option<usize>,
    culprits: Vec<i64>,
    /// Whether anything was tested yet (the first test is the whole batch).
    tested: bool,
    /// The base's own result, once asked.
    base_green: Option<bool>,
}

impl Bisection {
    pub(crate) fn new(items: Vec<i64>) -> Bisection {
        Bisection {
            items,
            green: 0,
            red: None,
            culprits: Vec::new(),
            tested: false,
            base_green: None,
        }
    }

    /// The tasks still in the batch, in order.
    pub(crate) fn items(&self) -> &[i64] {
        &self.items
    }

    /// The next step; a culprit the last results pinned down is taken out first.
    pub(crate) fn next(&mut self) -> Next {
        loop {
            if self.base_green == Some(false) {
                return Next::BaseRed;
            }
            match self.red {
                Some(1) if self.green == 0 && self.base_green.is_none() => return Next::TestBase,
                Some(red) if red == self.green + 1 => {
                    let culprit = self.items.remove(self.green);
                    self.culprits.push(culprit);
                    self.red = None;
                }
                Some(red) => return Next::Test((self.green + red) / 2),
                None if self.green == self.items.len() => {
                    return Next::Land {
                        land: self.items.clone(),
                        culprits: self.culprits.clone(),
                    };
                }
                None if !self.tested => return Next::Test(self.items.len()),
                // "None left" is the outcome past the last task.
                None => return Next::Test((self.green + self.items.len()).div_ceil(2)),
            }
        }
    }

    /// The result of testing the first `n` tasks.
    pub(crate) fn record(&mut self, n: usize, green: bool) {
        self.tested = true;
        if green {
            self.green = self.green.max(n);
        } else {
            self.red = Some(self.red.map_or(n, |red| red.min(n)));
        }
    }

    /// The result of testing the base alone.
    pub(crate) fn record_base(&mut self, green: bool) {
        self.base_green = Some(green);
    }

    /// Takes the task at `index` out of the batch (it no longer merges with those ahead of
    /// it); what was known of the prefixes holding it is forgotten.
    pub(crate) fn remove(&mut self, index: usize) {
        if index >= self.items.len() {
            return;
        }
        self.items.remove(index);
        self.green = self.green.min(index);
        if self.red.is_some_and(|red| red > index) {
            self.red = None;
        }
    }
}

#[cfg(test)]
#[path = "bisect_tests.rs"]
mod tests;
