//! Human text for the task table and progress notices: plain lines, readable without colour,
//! with long things clipped and a pointer to where the whole is.

use ganger_engine::report::TaskList;
use ganger_engine::{Notice, TreeMade};
use std::fmt::Write;

/// Appends `text` left-aligned in `width` columns, then a space. (Formatter padding writes its
/// fill one character at a time; the table has ten thousand rows to pad.)
fn left(out: &mut String, text: &str, width: usize) {
    out.push_str(text);
    let used = text.chars().count();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used) + 1));
}

/// Appends `text` right-aligned in `width` columns, then a space.
fn right(out: &mut String, text: &str, width: usize) {
    out.extend(std::iter::repeat_n(
        ' ',
        width.saturating_sub(text.chars().count()),
    ));
    out.push_str(text);
    out.push(' ');
}

/// The task table.
pub fn task_table(list: &TaskList, root: &std::path::Path) -> String {
    // Queued starts are tasks to be: a table without them must not read as an empty queue.
    let queued = match list.queued_starts {
        0 => String::new(),
        1 => "1 start is queued; `ganger fleet status` shows the queue".to_owned(),
        n => format!("{n} starts are queued; `ganger fleet status` shows the queue"),
    };
    if list.tasks.is_empty() {
        let mut out = match queued.is_empty() {
            false => format!("no tasks in {} yet: {queued}\n", root.display()),
            true => format!("no tasks in {}\n", root.display()),
        };
        killed_starts(&mut out, list);
        return out;
    }
    let mut out = String::with_capacity((list.tasks.len() + 1) * 160);
    let mut number = String::new();
    let columns: [(&str, usize, bool); 7] = [
        ("task", 28, false),
        ("rounds", 6, true),
        ("last", 12, false),
        ("session", 32, false),
        ("agent", 9, false),
        ("model", 24, false),
        ("cost", 9, true),
    ];
    for (name, width, align_right) in columns {
        if align_right {
            right(&mut out, name, width);
        } else {
            left(&mut out, name, width);
        }
    }
    out.push_str("worktree\n");
    for task in &list.tasks {
        match &task.role {
            // `status --tree`: a role's task under its pipeline's task.
            Some(role) => left(&mut out, &format!("  └ {role}"), 28),
            None => left(&mut out, &task.slug, 28),
        }
        number.clear();
        let _ = write!(number, "{}", task.rounds);
        right(&mut out, &number, 6);
        left(&mut out, task.last_status.map_or("-", |s| s.as_str()), 12);
        left(&mut out, task.session.as_deref().unwrap_or("-"), 32);
        left(&mut out, &task.agent, 9);
        left(&mut out, task.model.as_deref().unwrap_or("-"), 24);
        number.clear();
        let _ = write!(number, "${:.4}", task.cost_usd);
        right(&mut out, &number, 9);
        out.push_str(&task.worktree.to_string_lossy());
        if task.worktree_gone {
            out.push_str(" (gone)");
        }
        if let Some(warm) = &task.warm {
            let _ = write!(
                out,
                "  [warm, {} MB{}]",
                warm.memory_bytes / 1_000_000,
                if warm.busy { ", busy" } else { "" }
            );
        }
        if let Some(done) = &task.done {
            out.push_str("  ");
            out.push_str(done);
        }
        out.push('\n');
    }
    for overlap in &list.overlaps {
        let _ = writeln!(
            out,
            "overlap: {} and {} both change {}",
            overlap.tasks[0],
            overlap.tasks[1],
            overlap.files.join(", ")
        );
    }
    for conflict in &list.conflicts {
        let _ = writeln!(out, "{}", conflict_line(conflict));
    }
    if !queued.is_empty() {
        let _ = writeln!(out, "{queued}");
    }
    killed_starts(&mut out, list);
    out
}

/// A line per start killed before its task was recorded: what it left, and what settles it.
fn killed_starts(out: &mut String, list: &TaskList) {
    for start in &list.killed_starts {
        let _ = writeln!(
            out,
            "the start of {} was killed before its task was recorded: it may have left worktree {} and branch {} (`ganger clean` settles them, as does `ganger start {}` again)",
            start.slug,
            start.worktree.display(),
            start.branch,
            start.slug
        );
    }
}

/// `, with node_modules and target shared from the main checkout`, or nothing.
pub fn shared_words(shared: &[String]) -> String {
    match shared {
        [] => String::new(),
        [one] => format!(", with {one} shared from the main checkout"),
        [first @ .., last] => format!(
            ", with {} and {last} shared from the main checkout",
            first.join(", ")
        ),
    }
}

/// A progress line for a notice.
pub fn notice_line(notice: &Notice) -> String {
    match notice {
        Notice::Model { model, verdict } => format!("model: {model}: {verdict}\n"),
        Notice::WorktreeCreated {
            path,
            branch,
            base,
            made,
            shared,
        } => {
            let how = match made {
                TreeMade::Checkout => "",
                TreeMade::Pool => ", ready from the pool",
                TreeMade::Reflink => ", a reflink copy of the cached tree",
                TreeMade::Overlay => ", an overlay on the cached tree",
            };
            format!(
                "worktree: created {} on {branch} from {base}{how}{}\n",
                path.display(),
                shared_words(shared)
            )
        }
        Notice::RoundStarted {
            slug,
            number,
            events,
        } => {
            format!(
                "round {number} of {slug} started; events: {}\n",
                events.display()
            )
        }
        Notice::Detached {
            slug,
            number,
            host_pid,
            log,
        } => format!(
            "round {number} of {slug} runs in the background (host pid {host_pid}); host log: {}\nwait for it: ganger wait {slug}\n",
            log.display()
        ),
        Notice::UntestedVersion {
            agent,
            program,
            version,
            tested,
        } => format!(
            "warning: {agent} at {} is {}, not the tested {tested}; using it anyway (`ganger agents install` installs the tested one)\n",
            program.display(),
            version.as_deref().map_or_else(
                || "of an unknown version".to_owned(),
                |v| format!("version {v}")
            )
        ),
        Notice::Pipeline { slug, message } => format!("pipeline {slug}: {message}\n"),
        Notice::Race { slug, message } => format!("race {slug}: {message}\n"),
        Notice::Moved { slug, from, to } => format!(
            "task {slug}'s worktree was on another host ({}): brought here, to {}\n",
            from.display(),
            to.display()
        ),
        Notice::Settled { slug, number } => {
            format!("round {number} of {slug} was found interrupted: its host had died\n")
        }
        Notice::ChecksSentBack {
            slug,
            number,
            attempt,
            limit,
            failed,
        } => format!(
            "checks failed after round {number} of {slug} ({}); sending them back, fix round {attempt} of at most {limit} (--until-green)\n",
            failed.join(", ")
        ),
        Notice::UntilGreenGaveUp {
            slug,
            rounds,
            failed,
        } => format!(
            "gave up on {slug}: checks still fail after {rounds} fix round{} (--until-green {rounds}): {}\n",
            if *rounds == 1 { "" } else { "s" },
            failed.join(", ")
        ),
        Notice::BudgetSpent { slug, why } => {
            format!("stopped sending fix rounds to {slug}: {why}\n")
        }
        Notice::WarmStopped { slug } => format!(
            "stopped {slug}'s warm agent: the next round takes up the session as it is then\n"
        ),
        Notice::Land { base, message } => format!("land {base}: {message}\n"),
    }
}

/// A predicted conflict: `conflict: t1 and t2 conflict in src/a.rs, lines 10-24`.
fn conflict_line(conflict: &ganger_engine::PredictedConflict) -> String {
    let files: Vec<String> = conflict
        .files
        .iter()
        .map(|file| {
            let lines: Vec<String> = file
                .lines
                .iter()
                .map(|[first, last]| format!("{first}-{last}"))
                .collect();
            if lines.is_empty() {
                file.path.clone()
            } else {
                format!("{}, lines {}", file.path, lines.join(", "))
            }
        })
        .collect();
    if conflict.with_base {
        format!(
            "conflict: {} conflicts with {} in {}",
            conflict.task,
            conflict.other,
            files.join("; ")
        )
    } else {
        format!(
            "conflict: {} and {} conflict in {}",
            conflict.task,
            conflict.other,
            files.join("; ")
        )
    }
}
