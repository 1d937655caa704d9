//! The `frisian-tb` binary: see `frisian-tb --help`.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
