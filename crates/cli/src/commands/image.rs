//! `ganger image`: build the worker images of the docker sandbox or the fleet worker image
//! (`build`, with progress lines on stderr) and list the ones there are (`list`).

use crate::args::{ImageAction, ImageArgs};
use crate::commands::agents::config_here;
use crate::exit;
use crate::printer::{self, Printer};
use crate::{Failure, Outcome, Place};
use ganger_engine::documents::{ImageBuild, Images};

pub(crate) fn run(place: &Place, args: ImageArgs) -> Outcome {
    match args.action {
        ImageAction::Build {
            agents,
            force,
            worker,
        } => build(place, &agents, force, worker, args.json),
        ImageAction::List => list(args.json),
    }
}

/// Megabytes, as `docker images` counts them.
fn megabytes(bytes: u64) -> String {
    format!("{:.0} MB", bytes as f64 / 1_000_000.0)
}

fn build(place: &Place, agents: &[String], force: bool, worker: bool, json: bool) -> Outcome {
    let config = config_here(place)?;
    let mut progress = |line: &str| {
        let _ = printer::emit_err(&format!("{line}\n"));
    };
    let built = if worker {
        vec![ganger_engine::image::build_worker(
            &config,
            agents,
            force,
            &mut progress,
        )?]
    } else {
        ganger_engine::image::build(&config, agents, force, &mut progress)?
    };
    let text = build_text(&built);
    Printer::new(json).print(&ImageBuild::new(built), || text)?;
    Ok(exit::OK)
}

fn build_text(built: &[ganger_engine::image::Built]) -> String {
    let mut out = String::new();
    for image in built {
        let what = if image.built {
            format!("built in {:.0} s", image.seconds)
        } else {
            "already there".to_owned()
        };
        out.push_str(&format!(
            "{:<9} {} ({what}, {})\n",
            image.agent,
            image.image,
            megabytes(image.size)
        ));
    }
    out
}

fn list(json: bool) -> Result<u8, Failure> {
    let images = ganger_engine::image::list()?;
    let text = list_text(&images);
    Printer::new(json).print(&Images::new(images), || text)?;
    Ok(exit::OK)
}

fn list_text(images: &[ganger_engine::image::ImageEntry]) -> String {
    let mut out = String::new();
    for image in images {
        let packages = if image.packages.is_empty() {
            "-".to_owned()
        } else {
            image.packages.join(",")
        };
        out.push_str(&format!(
            "{:<9} {:<10} {:<44} packages: {packages:<12} {:>7}\n",
            image.agent.as_deref().unwrap_or("(base)"),
            image.version.as_deref().unwrap_or("-"),
            image.image,
            megabytes(image.size)
        ));
    }
    if images.is_empty() {
        out.push_str("no worker images: `ganger image build --agent NAME` builds one\n");
    }
    out
}
