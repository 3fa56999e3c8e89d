//! What makes each run of `scripts/test-trees` a run with trees: a start in one of its worlds
//! reports the kind of tree the run means to make (`GANGER_TEST_TREES_EXPECT`: `overlay`,
//! `reflink` or `pool`). Without this check, a run whose trees fell back to checkouts (ganger
//! not root, the image without reflink, a pool never filled) would pass every test as a run
//! without trees. Ignored in the plain suite, which has no trees; the script runs it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{World, trees_are_on};

#[test]
#[ignore = "run by scripts/test-trees, which names the kind of tree its run makes"]
fn this_trees_run_makes_the_kind_of_tree_it_means_to() {
    let expected = std::env::var("GANGER_TEST_TREES_EXPECT")
        .expect("GANGER_TEST_TREES_EXPECT: the kind of tree this run makes");
    assert!(trees_are_on(), "GANGER_TEST_TREES is not set");
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write("src/a.txt", "a\n");
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "a file"]);
    // ganger.toml gets the run's [trees] table from the test support.
    world.use_command_agent("cat >/dev/null; echo 'DONE: ok'", "", "");
    let mut start = vec!["start", "t1", "--message", "hi", "--json"];
    match expected.as_str() {
        "overlay" => start.extend(["--sandbox", "bwrap"]),
        "pool" => {
            let fill = world.ganger(&["trees", "fill", "--json"]);
            fill.expect_code(0);
            assert!(fill.json()["made"].as_u64().unwrap() > 0, "{}", fill.stdout);
        }
        "reflink" => {}
        other => panic!("GANGER_TEST_TREES_EXPECT={other}: overlay, reflink or pool"),
    }
    world.ganger(&start).expect_code(0);
    let status = world.ganger(&["status", "t1", "--json"]);
    status.expect_code(0);
    assert_eq!(
        status.json()["tree"].as_str(),
        Some(expected.as_str()),
        "{}",
        status.stdout
    );
    // Nothing of the run is left mounted or running when the world goes.
    world.ganger(&["clean", "t1", "--force"]).expect_code(0);
}
