//! The fleets' remote work, off the scheduler's loop: each remote has a lane, a thread of its
//! own that owns the remote's clone and does, one job at a time, what needs the remote (the
//! clone or fetch before a round is delivered from it, and the delivery itself; the push of a
//! task's work after its round). The loop hands jobs over and reads what finished at its next
//! pass: a remote that is slow or silent (each exchange with it ends after its silence,
//! `ganger_git::remote_silence`) holds its own lane only, never the deliveries of other fleets
//! or of local starts.

use super::deliver::{Delivery, deliver, failed_delivery};
use super::remote::Clones;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notice;
use crate::env::workspace::Workspace;
use ganger_store::{QueueItem, Task};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

/// What a lane is asked to do.
enum Job {
    /// Make the item's round ready in the remote's clone, then deliver it there.
    Deliver(QueueItem),
    /// Push a task's branch and snapshot refs from the clone (after its round).
    Push(QueueItem, Box<Task>),
}

/// What a lane did, for the loop to record.
pub(super) enum Finished {
    Delivered(Box<QueueItem>, Delivery),
    Pushed(i64, Result<()>),
}

/// The lanes of one scheduler, one per remote it delivered from.
pub(super) struct Lanes {
    /// Where the home checkout is, whose store and state directory the lanes use.
    home: PathBuf,
    store: crate::env::store_location::StoreLocation,
    lanes: BTreeMap<String, Sender<Job>>,
    finished: Arc<Mutex<Vec<Finished>>>,
    /// Called when a job finished: wakes the loop.
    wake: Arc<dyn Fn() + Send + Sync>,
}

impl Lanes {
    /// Lanes for the scheduler of `ws`, which call `wake` when a job finished.
    pub(super) fn new(ws: &Workspace, wake: Arc<dyn Fn() + Send + Sync>) -> Lanes {
        Lanes {
            home: ws.repo.main.clone(),
            store: ws.store.clone(),
            lanes: BTreeMap::new(),
            finished: Arc::new(Mutex::new(Vec::new())),
            wake,
        }
    }

    /// Hands `item` to `remote`'s lane to be delivered from its clone.
    pub(super) fn deliver(&mut self, remote: &str, item: QueueItem) {
        self.send(remote, Job::Deliver(item));
    }

    /// Hands the push of `task`'s work (after `item`'s round) to `remote`'s lane.
    pub(super) fn push(&mut self, remote: &str, item: QueueItem, task: Task) {
        self.send(remote, Job::Push(item, Box::new(task)));
    }

    /// What the lanes finished since the last call.
    pub(super) fn finished(&self) -> Vec<Finished> {
        std::mem::take(&mut *self.finished.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn send(&mut self, remote: &str, job: Job) {
        let job = match self.lanes.get(remote) {
            Some(lane) => match lane.send(job) {
                Ok(()) => return,
                // The lane's thread is gone (it panicked): a new one takes the job.
                Err(failed) => failed.0,
            },
            None => job,
        };
        let (tx, jobs) = channel();
        let lane = Lane {
            home: self.home.clone(),
            store: self.store.clone(),
            remote: remote.to_owned(),
            finished: Arc::clone(&self.finished),
            wake: Arc::clone(&self.wake),
        };
        std::thread::spawn(move || lane.run(&jobs));
        let _ = tx.send(job);
        self.lanes.insert(remote.to_owned(), tx);
    }
}

/// One remote's lane: its thread's state.
struct Lane {
    home: PathBuf,
    store: crate::env::store_location::StoreLocation,
    remote: String,
    finished: Arc<Mutex<Vec<Finished>>>,
    wake: Arc<dyn Fn() + Send + Sync>,
}

/// What a lane keeps between its jobs, made at its first: the remote's clone and the store.
struct Kept {
    clones: Clones,
    store: Box<dyn ganger_store::Backend>,
}

impl Lane {
    /// Does the jobs handed over until the scheduler drops its end.
    fn run(self, jobs: &Receiver<Job>) {
        let mut kept: Option<Kept> = None;
        while let Ok(job) = jobs.recv() {
            let done = match job {
                Job::Deliver(item) => {
                    let delivery = match self.kept(&mut kept) {
                        Ok(kept) => self.delivered(kept, &item),
                        Err(e) => failed_delivery(e),
                    };
                    Finished::Delivered(Box::new(item), delivery)
                }
                Job::Push(item, task) => {
                    let pushed = self
                        .kept(&mut kept)
                        .and_then(|kept| kept.clones.push(&self.remote, &task));
                    Finished::Pushed(item.id, pushed)
                }
            };
            self.finished
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(done);
            (self.wake)();
        }
    }

    /// What this lane keeps, made at its first job (again after a failure to make it).
    fn kept<'k>(&self, kept: &'k mut Option<Kept>) -> Result<&'k mut Kept> {
        if kept.is_none() {
            let home = Workspace::discover(&self.home, Some(self.store.clone()))?;
            let store = home.open_store()?;
            *kept = Some(Kept {
                clones: Clones::new(&home),
                store,
            });
        }
        kept.as_mut()
            .ok_or_else(|| EngineError::invalid("the lane keeps nothing"))
    }

    /// Makes `item`'s round ready in the clone and delivers it there.
    fn delivered(&self, kept: &mut Kept, item: &QueueItem) -> Delivery {
        if let Err(e) = kept.clones.prepare(&mut *kept.store, &self.remote, item) {
            return failed_delivery(e);
        }
        match kept.clones.workspace(&self.remote) {
            Some(ws) => deliver(ws, &*kept.store, item, &mut |_: Notice| {}),
            None => Delivery::Unavailable(format!("the clone of {} was not made", self.remote)),
        }
    }
}
