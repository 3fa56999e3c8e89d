//! A repository for the merge queue's web tests, as land.rs makes one: its check (`sh
//! check.sh`) sources `api.sh` into every `mods/*.sh`, so a task that adds a mod is good, and
//! one that renames the api's function passes alone and breaks the others. The `command`
//! agent runs its prompt's last line as a shell script in its worktree.

use ganger_test_support::World;

const CHECK: &str = "set -e\n. ./api.sh\nfor f in mods/*.sh; do\n  [ -e \"$f\" ] || continue\n  \
                     sh -c \". ./api.sh; . ./$f\" >/dev/null || { echo \"FAIL: $f\"; exit 1; }\n\
                     done\necho ok\n";

/// The world, its checks `extra` (a toml fragment of more `[[checks]]`) and then `tests`.
pub fn land_world(extra: &str) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "eval \"$(tail -n 1)\"",
        "",
        &format!("{extra}\n[[checks]]\nname = \"tests\"\ncommand = \"sh check.sh\"\n"),
    );
    world.write("api.sh", "greet() { echo \"hello $1\"; }\n");
    world.write("check.sh", CHECK);
    let lines: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    world.write("notes.txt", &lines);
    world.write(".gitignore", "ganger.toml\n");
    world.git(&["add", "api.sh", "check.sh", "notes.txt", ".gitignore"]);
    world.git(&["commit", "-q", "-m", "an api and its check"]);
    world
}

/// Starts task `slug` as `commander` (or the world's own), its round running `script`, and
/// expects `code` of it.
pub fn start_as(world: &World, commander: Option<&str>, slug: &str, script: &str, code: i32) {
    let mut args = vec!["start", slug, "--message", script];
    if let Some(name) = commander {
        args.extend(["--as", name]);
    }
    world.ganger(&args).expect_code(code);
}

/// A good task: a mod that uses the api.
pub fn good(world: &World, commander: Option<&str>, slug: &str) {
    let script = format!("mkdir -p mods; echo 'greet {slug}' > mods/{slug}.sh");
    start_as(world, commander, slug, &script, 0);
}

/// A culprit: renames the api's function (nothing uses it alone; the good tasks' mods do).
pub fn culprit(world: &World, commander: Option<&str>, slug: &str) {
    start_as(
        world,
        commander,
        slug,
        "echo 'salute() { echo \"hi $1\"; }' > api.sh",
        0,
    );
}
