//! The `frisian-tb` binary: see `frisian-tb --help`.

mod cli;

fn main() {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`frisian-tb
    // probe ... | head -2`) made `println!` panic with a backtrace. Restore the
    // default, as Unix tools have it: the process ends quietly when its
    // reader goes away.
    #[cfg(unix)]
    // SAFETY: called first thing, before any other thread exists; SIG_DFL is
    // a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(cli::main());
}
