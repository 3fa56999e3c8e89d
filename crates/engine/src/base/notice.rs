//! Things a command reports while it works (a model checked, a worktree made, a round
//! started), handed to the front end to print or not; the library never prints.

use std::path::PathBuf;

/// How a task's worktree got its files (docs/trees.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TreeMade {
    /// `git worktree add`: checked out for the task.
    Checkout,
    /// Taken ready from the pool of worktrees (`[trees] pool`).
    Pool,
    /// A reflink copy of the base's cached tree (`[trees] max`).
    Reflink,
    /// An overlay: the base's cached tree below, the task's own upper folder above (a
    /// sandboxed task with `[trees] max`).
    Overlay,
}

impl TreeMade {
    /// The word a report shows and `.git/worktrees/NAME/ganger-tree` holds.
    pub fn word(self) -> &'static str {
        match self {
            TreeMade::Checkout => "checkout",
            TreeMade::Pool => "pool",
            TreeMade::Reflink => "reflink",
            TreeMade::Overlay => "overlay",
        }
    }

    /// The way a word of [`TreeMade::word`] names.
    pub fn from_word(word: &str) -> Option<TreeMade> {
        [
            TreeMade::Checkout,
            TreeMade::Pool,
            TreeMade::Reflink,
            TreeMade::Overlay,
        ]
        .into_iter()
        .find(|made| made.word() == word)
    }
}

/// One step a command took.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// The model was checked (or not, and why).
    Model { model: String, verdict: String },
    /// A worktree was made.
    WorktreeCreated {
        path: PathBuf,
        branch: String,
        base: String,
        /// How its files came: checked out, taken ready from the pool, or a reflink copy of
        /// the cached tree.
        made: TreeMade,
        /// The main checkout's folders shared into it (`[trees] share`).
        shared: Vec<String>,
    },
    /// A round started in the foreground; its events are in `events`.
    RoundStarted {
        slug: String,
        number: u32,
        events: PathBuf,
    },
    /// A round was left to a detached host.
    Detached {
        slug: String,
        number: u32,
        host_pid: u32,
        log: PathBuf,
    },
    /// A round whose host had died was settled: interrupted, or cancelled when a cancel had
    /// been asked for.
    Settled { slug: String, number: u32 },
    /// A task whose worktree was on another host was brought here (from `from` to `to`).
    Moved {
        slug: String,
        from: PathBuf,
        to: PathBuf,
    },
    /// The agent's program is not the version ganger is tested with (`version` is `None`
    /// when it could not be read); it is used anyway.
    UntestedVersion {
        agent: String,
        program: PathBuf,
        version: Option<String>,
        tested: String,
    },
    /// A step of a pipeline (`ganger plan`, `approve`, `reject`): a role's turn, a step, a
    /// verdict, a retry.
    Pipeline { slug: String, message: String },
    /// Round `number`'s checks failed and `--until-green` sends them back as the next round
    /// (the `attempt`th of at most `limit`).
    ChecksSentBack {
        slug: String,
        number: u32,
        attempt: u32,
        limit: u32,
        failed: Vec<String>,
    },
    /// `--until-green` sent all its rounds and the checks still fail.
    UntilGreenGaveUp {
        slug: String,
        rounds: u32,
        failed: Vec<String>,
    },
    /// `--until-green` stopped before its next round: the task's (or its fleet's) budget is
    /// spent.
    BudgetSpent { slug: String, why: String },
    /// The task's warm agent was stopped (before `attach`: it would not see the person's
    /// turns); the next round's agent loads the session again.
    WarmStopped { slug: String },
    /// A lander's step on `base` (`ganger land --run`): a batch taken, a check run, a task
    /// sent back, a batch landed.
    Land { base: String, message: String },
    /// A step of a race (`ganger race`): attempts started, ended, cancelled, judged.
    Race { slug: String, message: String },
}

/// Where notices go.
pub trait Notices {
    fn notice(&mut self, notice: Notice);
}

impl<F: FnMut(Notice)> Notices for F {
    fn notice(&mut self, notice: Notice) {
        self(notice);
    }
}
