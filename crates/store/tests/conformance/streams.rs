//! A round's streams: written by appending, read back from any offset (stdout and stderr
//! apart), and followed: a follower sees what is appended as it comes, waits for a stream not
//! made yet while the round lives, and stops once the round's claim has ended, with
//! everything appended before the end read.

use super::fixtures::{new_round, new_task};
use super::{DEATH_NOTICED_WITHIN, Site};
use ganger_store::{RoundKind, RoundStream, StreamKind};
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

/// The streams of a new task's first round.
fn streams_of(site: &dyn Site, slug: &str) -> (RoundStream, RoundStream) {
    let mut store = site.connect();
    let (task, round) = store
        .create_task(
            &new_task(slug, "alice"),
            &new_round(RoundKind::Start, slug, "alice"),
        )
        .unwrap();
    (
        RoundStream::of(&task, &round, StreamKind::Stdout),
        RoundStream::of(&task, &round, StreamKind::Stderr),
    )
}

fn read_all(reader: Option<Box<dyn Read + Send>>) -> Vec<u8> {
    let mut bytes = Vec::new();
    reader.unwrap().read_to_end(&mut bytes).unwrap();
    bytes
}

pub fn a_stream_reads_back_from_any_offset(site: &dyn Site) {
    let (stdout, stderr) = streams_of(site, "s");
    let store = site.connect();
    let reader = site.connect();
    assert!(reader.read_stream(&stdout, 0).unwrap().is_none());
    let mut out = store.create_stream(&stdout).unwrap();
    let mut err = store.create_stream(&stderr).unwrap();
    out.write_all(b"{\"type\":\"step_start\"}\n").unwrap();
    err.write_all(b"warning: slow\n").unwrap();
    // What a write appended can be read at once, by anyone.
    assert_eq!(
        read_all(reader.read_stream(&stdout, 0).unwrap()),
        b"{\"type\":\"step_start\"}\n"
    );
    out.write_all(b"{\"type\":\"text\"}\n").unwrap();
    assert_eq!(
        read_all(reader.read_stream(&stdout, 22).unwrap()),
        b"{\"type\":\"text\"}\n"
    );
    assert_eq!(
        read_all(reader.read_stream(&stdout, 0).unwrap()).len(),
        22 + 16
    );
    assert!(read_all(reader.read_stream(&stdout, 38).unwrap()).is_empty());
    assert_eq!(read_all(reader.read_stream(&stderr, 9).unwrap()), b"slow\n");
    // Bytes are kept as they came, whatever they are.
    let odd: Vec<u8> = (0..=255u8).chain([0, b'\n', 0xff]).collect();
    err.write_all(&odd).unwrap();
    assert_eq!(read_all(reader.read_stream(&stderr, 14).unwrap()), odd);
    // The gateway's stream is a third of the round's, apart from the other two.
    let gateway = RoundStream {
        kind: StreamKind::Gateway,
        ..stdout.clone()
    };
    assert!(reader.read_stream(&gateway, 0).unwrap().is_none());
    let mut requests = store.create_stream(&gateway).unwrap();
    requests.write_all(b"{\"status\":200}\n").unwrap();
    assert_eq!(
        read_all(reader.read_stream(&gateway, 0).unwrap()),
        b"{\"status\":200}\n"
    );
    assert_eq!(read_all(reader.read_stream(&stdout, 0).unwrap()).len(), 38);
    // Made anew, a stream starts empty.
    drop(out);
    let _out = store.create_stream(&stdout).unwrap();
    assert!(read_all(reader.read_stream(&stdout, 0).unwrap()).is_empty());
}

pub fn a_follow_sees_what_is_appended_and_stops_at_the_rounds_end(site: &dyn Site) {
    let (stdout, _) = streams_of(site, "f");
    let host = site.connect();
    let claim = host.claim("f-host").unwrap();
    let key = claim.key().clone();
    let (followed, from_offset, ended_after) = std::thread::scope(|scope| {
        let follow_from = |offset: u64| {
            let stdout = &stdout;
            let key = &key;
            scope.spawn(move || {
                let observer = site.connect();
                let mut follow = observer.follow_stream(stdout, key, offset).unwrap();
                let mut seen = Vec::new();
                let mut chunk = [0u8; 4];
                loop {
                    let read = follow.read(&mut chunk).unwrap();
                    if read == 0 {
                        return (seen, Instant::now());
                    }
                    seen.extend_from_slice(&chunk[..read]);
                }
            })
        };
        // Following starts before the host has made the stream.
        let follower = follow_from(0);
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            !follower.is_finished(),
            "a follow ended while its round lived"
        );
        let mut out = host.create_stream(&stdout).unwrap();
        out.write_all(b"one\n").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let late = follow_from(2);
        out.write_all(b"two\n").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(!follower.is_finished());
        // The last bytes come just before the end.
        out.write_all(b"three").unwrap();
        let ended = Instant::now();
        claim.release();
        let (seen, at) = follower.join().unwrap();
        let (from_two, _) = late.join().unwrap();
        (seen, from_two, at.duration_since(ended))
    });
    assert_eq!(followed, b"one\ntwo\nthree");
    assert_eq!(from_offset, b"e\ntwo\nthree");
    assert!(
        ended_after < Duration::from_secs(2),
        "the follow ended {ended_after:?} after its round"
    );
    // Following a round that has ended reads what it wrote and stops.
    let observer = site.connect();
    let mut all = Vec::new();
    observer
        .follow_stream(&stdout, &key, 4)
        .unwrap()
        .read_to_end(&mut all)
        .unwrap();
    assert_eq!(all, b"two\nthree");
}

pub fn a_follow_of_a_stream_its_dead_round_never_made_fails(site: &dyn Site) {
    let (stdout, _) = streams_of(site, "never");
    let host = site.connect();
    let claim = host.claim("never-host").unwrap();
    let key = claim.key().clone();
    drop(claim);
    let observer = site.connect();
    assert!(
        observer
            .wait_for_end(&key, Some(DEATH_NOTICED_WITHIN))
            .unwrap()
    );
    let mut bytes = Vec::new();
    let error = observer
        .follow_stream(&stdout, &key, 0)
        .unwrap()
        .read_to_end(&mut bytes)
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
}

pub fn a_kept_session_reads_back_and_only_a_later_round_replaces_it(site: &dyn Site) {
    use ganger_store::KeptSession;
    let mut store = site.connect();
    let (task, _) = store
        .create_task(
            &new_task("kept", "alice"),
            &new_round(RoundKind::Start, "kept", "alice"),
        )
        .unwrap();
    let task = task.id;
    assert_eq!(store.kept_session(task).unwrap(), None);
    let kept = |round: u32, data: &[u8]| KeptSession {
        round,
        session: format!("sess-{round}"),
        data: data.to_vec(),
    };
    // Any bytes, kept as they came.
    let odd: Vec<u8> = (0..=255u8).chain([0, b'\n']).collect();
    store.keep_session(task, &kept(1, &odd)).unwrap();
    assert_eq!(
        site.connect().kept_session(task).unwrap(),
        Some(kept(1, &odd))
    );
    store.keep_session(task, &kept(3, b"three")).unwrap();
    // A host that lost round 2 and writes late does not replace round 3's.
    store.keep_session(task, &kept(2, b"two")).unwrap();
    assert_eq!(store.kept_session(task).unwrap(), Some(kept(3, b"three")));
    // Another task's is its own.
    assert_eq!(store.kept_session(task + 1000).unwrap(), None);
}

/// A finished round's streams packed (`compact_streams`; a backend that keeps files packs
/// nothing) read back byte for byte from any offset, also for a reader half way through when
/// they were packed; a running round's are not packed, and a packed round is no longer
/// listed as one to pack.
pub fn a_finished_rounds_packed_stream_reads_back_byte_for_byte(site: &dyn Site) {
    let (stdout, stderr) = streams_of(site, "p");
    let mut store = site.connect();
    let reader = site.connect();
    let mut out = store.create_stream(&stdout).unwrap();
    let mut err = store.create_stream(&stderr).unwrap();
    let mut written = Vec::new();
    for line in 0..200u32 {
        let text = format!(
            "{{\"type\":\"text\",\"n\":{line},\"pad\":\"{}\"}}\n",
            "x".repeat(40)
        );
        out.write_all(text.as_bytes()).unwrap();
        written.extend_from_slice(text.as_bytes());
    }
    let odd: Vec<u8> = (0..=255u8).chain([0, b'\n', 0xff]).collect();
    err.write_all(&odd).unwrap();
    // Running: nothing to pack.
    assert_eq!(store.compact_streams(stdout.round_id).unwrap(), 0);
    assert!(store.unpacked_rounds(10).unwrap().is_empty());
    store
        .finish_round(stdout.round_id, &super::fixtures::done())
        .unwrap();
    let half = written.len() / 2;
    let first_half = read_all(reader.read_stream(&stdout, 0).unwrap());
    let packable = store.unpacked_rounds(10).unwrap();
    assert!(
        packable.is_empty() || packable == [stdout.round_id],
        "{packable:?}"
    );
    let packed = store.compact_streams(stdout.round_id).unwrap();
    assert_eq!(packed as usize, packable.len() * 2, "both streams, or none");
    assert!(store.unpacked_rounds(10).unwrap().is_empty());
    // The reader that had read up to `half` reads on from there: the same bytes.
    let rest = read_all(reader.read_stream(&stdout, half as u64).unwrap());
    assert_eq!([&first_half[..half], &rest[..]].concat(), written);
    assert_eq!(read_all(reader.read_stream(&stdout, 0).unwrap()), written);
    assert_eq!(read_all(reader.read_stream(&stderr, 0).unwrap()), odd);
    assert_eq!(
        read_all(reader.read_stream(&stderr, 256).unwrap()),
        [0, b'\n', 0xff]
    );
    assert!(read_all(reader.read_stream(&stdout, written.len() as u64).unwrap()).is_empty());
    // Packed once: a second pass packs nothing.
    assert_eq!(store.compact_streams(stdout.round_id).unwrap(), 0);
}
