//! The `ganger` binary: everything is in the library, so that tests and other front ends share it.

fn main() -> std::process::ExitCode {
    ganger_cli::main()
}
