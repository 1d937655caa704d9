//! Every example a user is shown runs as shown: each `Examples:` line of the
//! command line's `--help` texts, each `$ frisian-tb ...` line of README.md
//! and the main command of its "Install and the two commands".
//!
//! They run in a scratch directory laid out like a checkout (`tables/` with
//! the tables up to three pieces in both rule sets, `examples/studies.pdn`),
//! one after the other, so that an example may use what an earlier one made.
//! Absolute paths in the examples (`/tmp/...`, `/var/tmp/...`, `/data/...`)
//! are moved into the scratch directory.

use std::path::{Path, PathBuf};
use std::process::Command;

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_frisian-tb"))
}

/// The words of a command line as a POSIX shell splits them (single and
/// double quotes; no variables or escapes, which no example uses).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "unbalanced quotes in `{line}`");
    words.extend(word);
    words
}

/// A command line without its trailing `# comment`.
fn without_comment(line: &str) -> &str {
    match line.find(" #") {
        Some(i) => line[..i].trim_end(),
        None => line.trim_end(),
    }
}

/// The names of the subcommands, from the top-level help.
fn subcommands() -> Vec<String> {
    let out = binary().arg("--help").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut names = Vec::new();
    let mut in_commands = false;
    for line in text.lines() {
        if line.starts_with("Commands:") {
            in_commands = true;
            continue;
        }
        if in_commands {
            if !line.starts_with("  ") {
                break;
            }
            let name = line.split_whitespace().next().unwrap();
            if name != "help" {
                names.push(name.to_string());
            }
        }
    }
    assert!(names.len() >= 8, "{text}");
    names
}

/// The example lines of a help text.
fn examples_in_help(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_examples = false;
    for line in text.lines() {
        if line.starts_with("Examples:") {
            in_examples = true;
            continue;
        }
        if in_examples {
            match line.trim_start().strip_prefix("frisian-tb ") {
                Some(_) if line.starts_with("  ") => out.push(without_comment(line.trim()).into()),
                _ => in_examples = false,
            }
        }
    }
    out
}

/// Every example of every `--help` text, top level first.
fn help_examples() -> Vec<String> {
    let mut all = Vec::new();
    let top = binary().arg("--help").output().unwrap();
    all.extend(examples_in_help(&String::from_utf8(top.stdout).unwrap()));
    for name in subcommands() {
        let out = binary().args([&name, "--help"]).output().unwrap();
        assert!(out.status.success(), "{name} --help");
        let examples = examples_in_help(&String::from_utf8(out.stdout).unwrap());
        assert!(!examples.is_empty(), "`{name} --help` shows no example");
        all.extend(examples);
    }
    all
}

/// The README's `$ frisian-tb ...` lines, and its main command's parts.
fn readme_examples() -> Vec<String> {
    let readme = include_str!("../README.md");
    let mut out = Vec::new();
    for line in readme.lines() {
        if let Some(cmd) = line.strip_prefix("cargo run --release -- ") {
            // `cargo run --release -- A && cargo run --release -- B`
            for part in cmd.split(" && cargo run --release -- ") {
                out.push(format!("frisian-tb {}", part.trim()));
            }
        }
        if let Some(cmd) = line.strip_prefix("$ frisian-tb ") {
            out.push(format!("frisian-tb {}", without_comment(cmd)));
        }
    }
    assert!(out.len() > 10, "{out:?}");
    out
}

/// A directory laid out like a checkout, for the examples to run in.
fn scratch() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("examples");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("examples")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("examples/studies.pdn"),
        dir.join("examples/studies.pdn"),
    )
    .unwrap();
    let out = binary()
        .args(["generate", "--max-pieces", "3", "--rules", "both"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// `example` with its absolute paths moved into `dir`.
fn in_scratch(example: &str, dir: &Path) -> Vec<String> {
    let d = dir.display();
    shell_words(example)
        .into_iter()
        .skip(1) // the program name
        .map(|w| {
            for (from, to) in [
                ("/var/tmp/", "var/"),
                ("/tmp/", "tmp/"),
                ("/data/", "data/"),
            ] {
                if let Some(rest) = w.strip_prefix(from) {
                    return format!("{d}/{to}{rest}");
                }
            }
            w
        })
        .collect()
}

#[test]
fn the_shell_splitter_reads_quotes() {
    assert_eq!(
        shell_words(r#"frisian-tb probe --play '43-34' "W:WK43,K50:BK14:SW4""#),
        [
            "frisian-tb",
            "probe",
            "--play",
            "43-34",
            "W:WK43,K50:BK14:SW4"
        ]
    );
    assert_eq!(
        without_comment("frisian-tb verify   # resumes"),
        "frisian-tb verify"
    );
}

#[test]
fn every_help_and_readme_example_runs() {
    let dir = scratch();
    // The directory an example names with `/var/tmp/tb` holds tables.
    std::fs::create_dir_all(dir.join("var")).unwrap();
    std::os::unix::fs::symlink(dir.join("tables"), dir.join("var/tb")).unwrap();
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    let mut examples = help_examples();
    examples.extend(readme_examples());
    let mut failed = Vec::new();
    for example in &examples {
        let args = in_scratch(example, &dir);
        let out = binary().args(&args).current_dir(&dir).output().unwrap();
        if !out.status.success() {
            failed.push(format!(
                "`{example}` exited with {:?}:\n{}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} examples failed:\n{}",
        failed.len(),
        examples.len(),
        failed.join("\n")
    );
}
