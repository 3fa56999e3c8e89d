//! Images: look one up by name, list ganger's, import a root filesystem (what `docker import`
//! does) or build from a context (the legacy builder: the daemon's API 1.41 has no BuildKit
//! session here), and remove one. Nothing here ever pulls: an import names no registry, and a
//! build's `FROM` must name an image the daemon has (callers check with [`Docker::image`]).

use crate::client::Docker;
use crate::error::DockerError;
use crate::upload::{self, BodyWriter};
use bollard::query_parameters::{
    BuildImageOptions, CreateImageOptions, ListImagesOptions, RemoveImageOptions,
};
use futures_util::StreamExt;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read};
use std::path::PathBuf;

/// What ganger reads of an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageInfo {
    /// `sha256:…`.
    pub id: String,
    /// Its names, `repository:tag`.
    pub tags: Vec<String>,
    pub labels: BTreeMap<String, String>,
    /// Bytes, as `docker images` shows them.
    pub size: u64,
}

/// The files of a build context: a Dockerfile and the host paths it copies, put in a tar as
/// the request is sent.
#[derive(Debug, Default)]
pub struct BuildContext {
    entries: Vec<(String, Entry)>,
}

#[derive(Debug)]
enum Entry {
    Bytes(Vec<u8>),
    Host(PathBuf),
}

impl BuildContext {
    /// An empty context.
    pub fn new() -> BuildContext {
        BuildContext::default()
    }

    /// A file made of `content` at `name` (for example `Dockerfile`).
    pub fn file(&mut self, name: &str, content: impl Into<Vec<u8>>) -> &mut Self {
        self.entries
            .push((name.into(), Entry::Bytes(content.into())));
        self
    }

    /// The host file or directory `path`, whole, at `name`; symbolic links stay links.
    pub fn host(&mut self, name: &str, path: impl Into<PathBuf>) -> &mut Self {
        self.entries.push((name.into(), Entry::Host(path.into())));
        self
    }

    fn write(self, writer: &mut BodyWriter) -> io::Result<()> {
        let mut tar = tar::Builder::new(writer);
        tar.follow_symlinks(false);
        // Owner root and a fixed time: the same files give the same layer.
        tar.mode(tar::HeaderMode::Deterministic);
        // Whole files: Docker's builder refuses GNU sparse entries (a linked binary has holes).
        tar.sparse(false);
        for (name, entry) in self.entries {
            match entry {
                Entry::Bytes(content) => {
                    let mut header = tar::Header::new_gnu();
                    header.set_size(content.len() as u64);
                    header.set_mode(0o644);
                    header.set_mtime(0);
                    header.set_cksum();
                    tar.append_data(&mut header, &name, content.as_slice())?;
                }
                Entry::Host(path) if path.is_dir() => tar.append_dir_all(&name, &path)?,
                Entry::Host(path) => tar.append_path_with_name(&path, &name)?,
            }
        }
        tar.finish()
    }
}

/// `repository:tag` split at the tag's colon (a registry's port is not a tag).
fn split_name(name: &str) -> (&str, &str) {
    match name.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo, tag),
        _ => (name, "latest"),
    }
}

/// A Dockerfile string: double-quoted, with `\` and `"` escaped.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

impl Docker {
    /// The image called `name`, or `None` when the daemon has none by that name.
    pub fn image(&self, name: &str) -> Result<Option<ImageInfo>, DockerError> {
        let inspect = match self.block_on(self.api.inspect_image(name)) {
            Ok(inspect) => inspect,
            Err(error) => {
                let error = DockerError::from(error);
                return if error.is_not_found() {
                    Ok(None)
                } else {
                    Err(error)
                };
            }
        };
        Ok(Some(ImageInfo {
            id: inspect.id.unwrap_or_default(),
            tags: inspect.repo_tags.unwrap_or_default(),
            labels: inspect
                .config
                .and_then(|config| config.labels)
                .unwrap_or_default()
                .into_iter()
                .collect(),
            size: inspect.size.unwrap_or_default().max(0) as u64,
        }))
    }

    /// Every image that carries the label `key` (any value), newest first.
    pub fn images_labelled(&self, key: &str) -> Result<Vec<ImageInfo>, DockerError> {
        let options = ListImagesOptions {
            filters: Some(HashMap::from([("label".into(), vec![key.into()])])),
            ..Default::default()
        };
        let mut summaries = self.block_on(self.api.list_images(Some(options)))?;
        summaries.sort_by_key(|s| std::cmp::Reverse(s.created));
        Ok(summaries
            .into_iter()
            .map(|summary| ImageInfo {
                id: summary.id,
                tags: summary
                    .repo_tags
                    .into_iter()
                    .filter(|tag| tag != "<none>:<none>")
                    .collect(),
                labels: summary.labels.into_iter().collect(),
                size: summary.size.max(0) as u64,
            })
            .collect())
    }

    /// Imports the root filesystem tar read from `rootfs` as the image `name`, with `labels`
    /// and the Dockerfile instructions in `changes` (`ENV …`, `CMD …`). The tar streams to the
    /// daemon as it is read; a read error aborts the import. Returns the image's id.
    pub fn import_image<R: Read + Send + 'static>(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
        changes: &[String],
        rootfs: R,
    ) -> Result<String, DockerError> {
        let (repo, tag) = split_name(name);
        let mut all_changes: Vec<String> = changes.to_vec();
        all_changes.extend(
            labels
                .iter()
                .map(|(key, value)| format!("LABEL {}={}", quoted(key), quoted(value))),
        );
        let options = CreateImageOptions {
            from_src: Some("-".into()),
            repo: Some(repo.into()),
            tag: Some(tag.into()),
            changes: all_changes,
            ..Default::default()
        };
        let body = bollard::body_try_stream(upload::body_from_reader(rootfs));
        self.block_on(async {
            let mut progress = self.api.create_image(Some(options), Some(body), None);
            while let Some(item) = progress.next().await {
                item?;
            }
            Ok::<(), DockerError>(())
        })?;
        self.image(name)?.map(|image| image.id).ok_or_else(|| {
            DockerError::Api(format!(
                "the import of {name} ended but there is no such image"
            ))
        })
    }

    /// Builds the image `name` from `context` with `labels`, by the legacy builder, and never
    /// pulls. `output` receives the build's output lines. Returns the image's id.
    pub fn build_image(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
        context: BuildContext,
        output: &mut dyn FnMut(&str),
    ) -> Result<String, DockerError> {
        let options = BuildImageOptions {
            dockerfile: "Dockerfile".into(),
            t: Some(name.into()),
            rm: true,
            forcerm: true,
            labels: Some(labels.clone().into_iter().collect()),
            ..Default::default()
        };
        let body = bollard::body_try_stream(upload::body(move |writer| context.write(writer)));
        self.block_on(async {
            let mut progress = self.api.build_image(options, None, Some(body));
            while let Some(item) = progress.next().await {
                let info = item?;
                if let Some(text) = info.stream {
                    for line in text.lines().filter(|line| !line.trim().is_empty()) {
                        output(line);
                    }
                }
            }
            Ok::<(), DockerError>(())
        })?;
        self.image(name)?.map(|image| image.id).ok_or_else(|| {
            DockerError::Api(format!(
                "the build of {name} ended but there is no such image"
            ))
        })
    }

    /// Removes the image `name` (a name or an id); one that is not there is not an error.
    pub fn remove_image(&self, name: &str) -> Result<(), DockerError> {
        let options = RemoveImageOptions {
            force: false,
            noprune: false,
            ..Default::default()
        };
        match self.block_on(self.api.remove_image(name, Some(options), None)) {
            Ok(_) => Ok(()),
            Err(error) => crate::cleanup::absent_is_fine(error.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_splits_at_the_tag_not_at_a_registry_port() {
        assert_eq!(
            split_name("ganger-base:trixie-1a2b3c4d"),
            ("ganger-base", "trixie-1a2b3c4d")
        );
        assert_eq!(split_name("ganger-base"), ("ganger-base", "latest"));
        assert_eq!(split_name("host:5000/img"), ("host:5000/img", "latest"));
    }

    #[test]
    fn a_label_value_is_quoted_for_a_dockerfile() {
        assert_eq!(quoted(r#"a "b" \c"#), r#""a \"b\" \\c""#);
    }
}
