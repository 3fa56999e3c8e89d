//! Finding and removing what ganger left in Docker: containers and volumes are found by their
//! labels only (the repository, and a task or a round's token), never by name, so that
//! nothing ganger did not make is ever touched. Removal is forced (a running container is
//! killed first) and a container or volume already gone counts as removed.

use crate::client::Docker;
use crate::error::DockerError;
use crate::labels;
use bollard::query_parameters::{
    ListContainersOptions, ListVolumesOptions, RemoveContainerOptions, RemoveVolumeOptions,
};
use std::collections::HashMap;

/// Which of ganger's objects to find: those of one repository, narrowed to a task or a round.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelFilter {
    /// The main checkout's absolute path (the `ganger.repo` label).
    pub repo: Option<String>,
    /// The task's slug (`ganger.task`).
    pub task: Option<String>,
    /// The round's token (`ganger.token`).
    pub token: Option<String>,
}

impl LabelFilter {
    /// The Engine API's `label` filter: `ganger.managed=1` and every label given.
    fn filters(&self) -> HashMap<String, Vec<String>> {
        let mut wanted = vec![format!("{}=1", labels::MANAGED)];
        for (label, value) in [
            (labels::REPO, &self.repo),
            (labels::TASK, &self.task),
            (labels::TOKEN, &self.token),
        ] {
            if let Some(value) = value {
                wanted.push(format!("{label}={value}"));
            }
        }
        HashMap::from([("label".to_owned(), wanted)])
    }
}

/// A container ganger made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagedContainer {
    pub id: String,
    /// Its name, without Docker's leading slash.
    pub name: String,
    /// `running`, `exited`, `created`, ...
    pub state: String,
}

impl ManagedContainer {
    /// The name when it has one, else the short id.
    pub fn display_name(&self) -> &str {
        if self.name.is_empty() {
            self.id.get(..12).unwrap_or(&self.id)
        } else {
            &self.name
        }
    }
}

impl Docker {
    /// Every container (running or not) that carries ganger's labels and matches `filter`.
    pub fn managed_containers(
        &self,
        filter: &LabelFilter,
    ) -> Result<Vec<ManagedContainer>, DockerError> {
        let options = ListContainersOptions {
            all: true,
            filters: Some(filter.filters()),
            ..Default::default()
        };
        let found = self.block_on(self.api.list_containers(Some(options)))?;
        Ok(found
            .into_iter()
            .filter_map(|summary| {
                let name = summary
                    .names
                    .as_ref()
                    .and_then(|names| names.first())
                    .map(|name| name.trim_start_matches('/').to_owned())
                    .unwrap_or_default();
                Some(ManagedContainer {
                    id: summary.id?,
                    name,
                    state: summary.state.map(|s| s.to_string()).unwrap_or_default(),
                })
            })
            .collect())
    }

    /// The names of every volume that carries ganger's labels and matches `filter`.
    pub fn managed_volumes(&self, filter: &LabelFilter) -> Result<Vec<String>, DockerError> {
        let options = ListVolumesOptions {
            filters: Some(filter.filters()),
        };
        let found = self.block_on(self.api.list_volumes(Some(options)))?;
        Ok(found
            .volumes
            .unwrap_or_default()
            .into_iter()
            .map(|volume| volume.name)
            .collect())
    }

    /// Removes a container, killing it first if it runs; one already gone is not an error.
    pub fn remove_container(&self, id: &str) -> Result<(), DockerError> {
        let options = RemoveContainerOptions {
            force: true,
            v: false,
            link: false,
        };
        match self.block_on(self.api.remove_container(id, Some(options))) {
            Ok(()) => Ok(()),
            Err(error) => absent_is_fine(error.into()),
        }
    }

    /// Removes a volume; one already gone is not an error.
    pub fn remove_volume(&self, name: &str) -> Result<(), DockerError> {
        let options = RemoveVolumeOptions { force: true };
        match self.block_on(self.api.remove_volume(name, Some(options))) {
            Ok(()) => Ok(()),
            Err(error) => absent_is_fine(error.into()),
        }
    }
}

/// `Ok` when `error` says the object is not there: removing what is gone is done.
pub(crate) fn absent_is_fine(error: DockerError) -> Result<(), DockerError> {
    if error.is_not_found() {
        Ok(())
    } else {
        Err(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_always_asks_for_the_managed_label_and_only_the_labels_given() {
        let filter = LabelFilter {
            repo: Some("/src/repo".into()),
            task: None,
            token: Some("tok".into()),
        };
        let filters = filter.filters();
        assert_eq!(
            filters["label"],
            [
                "ganger.managed=1",
                "ganger.repo=/src/repo",
                "ganger.token=tok"
            ]
        );
        assert_eq!(
            LabelFilter::default().filters()["label"],
            ["ganger.managed=1"]
        );
    }
}
