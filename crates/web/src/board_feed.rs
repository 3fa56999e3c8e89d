//! The board's live feed, shared by every client: one thread reads the store every
//! [`POLL`] (the task table and the journal after the last entry seen) and broadcasts what
//! changed: a journal entry, a task's new row, a task gone. A client takes the current
//! snapshot and its subscription under one lock, so every change after its snapshot reaches
//! it and none before it does twice. One reader for all clients: the cost of a look at the
//! store does not grow with the number of open pages.

use ganger_engine::{BoardTask, Engine};
use ganger_store::JournalEntry;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast;

/// How often the store is read.
pub const POLL: Duration = Duration::from_millis(100);

/// A change the board shows.
#[derive(Debug, Clone)]
pub enum BoardChange {
    Journal(Arc<JournalEntry>),
    Task(Arc<BoardTask>),
    TaskGone(String),
}

/// The table and the last journal entry, as of the last read.
#[derive(Debug, Clone, Default)]
pub struct BoardSnapshot {
    pub tasks: BTreeMap<String, Arc<BoardTask>>,
    pub journal_id: i64,
}

/// The feed.
#[derive(Debug)]
pub struct BoardFeed {
    snapshot: Mutex<BoardSnapshot>,
    sender: broadcast::Sender<BoardChange>,
    stop: AtomicBool,
    /// The last read's failure, if the last read failed (cleared by a good one).
    pub trouble: Mutex<Option<String>>,
}

impl BoardFeed {
    /// Starts the reader thread for `engine`'s repository.
    pub fn start(engine: Arc<Engine>) -> Arc<BoardFeed> {
        let (sender, _) = broadcast::channel(8192);
        let feed = Arc::new(BoardFeed {
            snapshot: Mutex::new(BoardSnapshot::default()),
            sender,
            stop: AtomicBool::new(false),
            trouble: Mutex::new(None),
        });
        if let Ok(mut snapshot) = feed.snapshot.lock() {
            // The journal so far is history: clients ask for it with Last-Event-ID.
            snapshot.journal_id = engine.last_journal_id().unwrap_or(0);
            snapshot.tasks = engine
                .board_tasks()
                .unwrap_or_default()
                .into_iter()
                .map(|t| (t.slug.clone(), Arc::new(t)))
                .collect();
        }
        let reader = feed.clone();
        std::thread::Builder::new()
            .name("board-feed".into())
            .spawn(move || reader.run(&engine))
            .ok();
        feed
    }

    /// The snapshot now, and every change after it.
    pub fn subscribe(&self) -> (BoardSnapshot, broadcast::Receiver<BoardChange>) {
        let snapshot = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        (snapshot.clone(), self.sender.subscribe())
    }

    /// Stops the reader thread (at its next read).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    fn run(&self, engine: &Engine) {
        while !self.stop.load(Ordering::Relaxed) {
            let read = self.read_once(engine);
            if let Ok(mut trouble) = self.trouble.lock() {
                *trouble = read.err().map(|e| e.message);
            }
            std::thread::sleep(POLL);
        }
    }

    fn read_once(&self, engine: &Engine) -> Result<(), ganger_engine::EngineError> {
        let after = self
            .snapshot
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .journal_id;
        let journal = engine.journal_after(after, 1000)?;
        let tasks = engine.board_tasks()?;
        let mut snapshot = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        for entry in journal {
            snapshot.journal_id = snapshot.journal_id.max(entry.id);
            let _ = self.sender.send(BoardChange::Journal(Arc::new(entry)));
        }
        let mut seen = std::collections::BTreeSet::new();
        for task in tasks {
            seen.insert(task.slug.clone());
            if snapshot.tasks.get(&task.slug).is_some_and(|t| **t == task) {
                continue;
            }
            let task = Arc::new(task);
            snapshot.tasks.insert(task.slug.clone(), task.clone());
            let _ = self.sender.send(BoardChange::Task(task));
        }
        let gone: Vec<String> = snapshot
            .tasks
            .keys()
            .filter(|slug| !seen.contains(*slug))
            .cloned()
            .collect();
        for slug in gone {
            snapshot.tasks.remove(&slug);
            let _ = self.sender.send(BoardChange::TaskGone(slug));
        }
        Ok(())
    }
}
