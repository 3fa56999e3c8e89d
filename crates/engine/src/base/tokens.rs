//! Fresh names: a round's token (unique per round on this machine, safe in file names and
//! refs) and a random UUID for naming a session up front.

/// A fresh round token: unique per round on this machine, safe in file names and refs.
pub(crate) fn new_token() -> String {
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "r{:x}-{:x}-{}",
        nanos,
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// A random UUID (version 4) from the kernel's generator, for naming a session up front.
pub(crate) fn new_uuid() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        // No generator: time and process make it unique enough on this machine.
        let seed = new_token();
        for (i, b) in seed.bytes().enumerate() {
            bytes[i % 16] ^= b.rotate_left(i as u32 % 8);
        }
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
