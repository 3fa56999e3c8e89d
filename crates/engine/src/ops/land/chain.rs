//! The commits a batch is tested on and lands as, computed without a work tree
//! (`git merge-tree --write-tree`): a prefix of the batch is the base's head with each task
//! merged in turn (kept, so that the next longer prefix merges one task more), and what lands
//! is one commit with the tested tree whose parents are the head and every landing task, so
//! that every commit the base gets is one whose checks ran.

use crate::base::error::Result;
use ganger_git::{Oid, Repo};
use std::collections::HashMap;

/// A task that does not merge: where in the prefix, and the conflicting files.
pub(crate) struct Conflict {
    pub index: usize,
    pub files: Vec<String>,
}

/// The prefixes merged so far on one head.
pub(crate) struct Chain<'a> {
    repo: &'a Repo,
    head: Oid,
    merged: HashMap<Vec<String>, Oid>,
}

impl<'a> Chain<'a> {
    pub(crate) fn new(repo: &'a Repo, head: &str) -> Chain<'a> {
        Chain {
            repo,
            head: head.to_owned(),
            merged: HashMap::new(),
        }
    }

    /// The conflicting files of `commit` merged onto the head alone (empty: it merges).
    pub(crate) fn conflicts_with_head(&self, commit: &str) -> Result<Vec<String>> {
        Ok(self.repo.merge_trees(&self.head, commit, None)?.conflicts)
    }

    /// The head with `commits` merged in order, or the first that conflicts.
    pub(crate) fn prefix(
        &mut self,
        commits: &[String],
    ) -> Result<std::result::Result<Oid, Conflict>> {
        let mut done = (0..=commits.len())
            .rev()
            .find(|n| *n == 0 || self.merged.contains_key(&commits[..*n]))
            .unwrap_or(0);
        let mut at = if done == 0 {
            self.head.clone()
        } else {
            self.merged[&commits[..done]].clone()
        };
        while done < commits.len() {
            let task = &commits[done];
            let merged = self.repo.merge_trees(&at, task, None)?;
            if !merged.conflicts.is_empty() {
                return Ok(Err(Conflict {
                    index: done,
                    files: merged.conflicts,
                }));
            }
            at = self.repo.commit_tree(
                &merged.tree,
                &[at.as_str(), task.as_str()],
                "ganger land: a batch under test",
            )?;
            done += 1;
            self.merged.insert(commits[..done].to_vec(), at.clone());
        }
        Ok(Ok(at))
    }

    /// The commit the base moves to: the tested tree of `tested` (the prefix of exactly the
    /// landing tasks), with the head and each task as parents.
    pub(crate) fn landing_commit(
        &self,
        tested: &str,
        commits: &[String],
        message: &str,
    ) -> Result<Oid> {
        let tree = self
            .repo
            .tree_of(tested)
            .unwrap_or_else(|| tested.to_owned());
        let mut parents = vec![self.head.as_str()];
        parents.extend(commits.iter().map(String::as_str));
        Ok(self.repo.commit_tree(&tree, &parents, message)?)
    }
}
