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
    if let Err(missing) = processor_supports_build() {
        eprintln!(
            "error: this build of frisian-tb uses the {missing} instruction, which this processor \
             lacks; build it for this processor with RUSTFLAGS=\"-C target-feature=-popcnt\" \
             cargo build --release"
        );
        std::process::exit(2);
    }
    std::process::exit(cli::main());
}

/// Whether the processor has the instructions this build was compiled to use
/// (see `.cargo/config.toml`): a clear message instead of a crash on an
/// illegal instruction. `is_x86_feature_detected!` cannot tell, as it answers
/// "yes" for any feature enabled at compile time.
fn processor_supports_build() -> Result<(), &'static str> {
    #[cfg(all(target_arch = "x86_64", target_feature = "popcnt"))]
    {
        // CPUID leaf 1, ECX bit 23: POPCNT.
        let ecx = std::arch::x86_64::__cpuid(1).ecx;
        if ecx & (1 << 23) == 0 {
            return Err("POPCNT");
        }
    }
    Ok(())
}
