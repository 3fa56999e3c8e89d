//! This machine, as ganger names it to others: the host name workers register and journal
//! entries record, and that a warm agent's claim is scoped by on a shared store.

/// The machine's host name (`localhost` when the kernel has none).
pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
