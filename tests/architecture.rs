//! The module structure stated in README's tour, checked from the sources:
//! no module depends on another that depends back on it, and the
//! independent verifier uses no part of the generator.
//!
//! A module's dependencies are the `crate::` and `super::` paths its file
//! names (in `use` lines and inline), outside `#[cfg(test)]` blocks. A
//! parent's `mod` and `pub use` lines only declare and re-export its
//! children, so they are not counted: a `mod.rs` that holds code of its own
//! and is used by its children would still show as a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`generate::pair`) of each source file under `src/`.
fn modules() -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                let mut p = prefix.to_vec();
                p.push(name);
                walk(&path, &p, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let mut p = prefix.to_vec();
                if name != "mod" {
                    p.push(name);
                }
                out.insert(p.join("::"), path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut out,
    );
    // The crate root and the binary only declare and re-export.
    out.remove("");
    out.remove("lib");
    out.remove("main");
    out
}

/// The source of `path` without comments, `#[cfg(test)]` items, and the
/// `mod` / `pub use` lines of a parent.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = String::new();
    let mut skip_depth: Option<i32> = None;
    let mut depth = 0i32;
    let mut test_next = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap();
        let trimmed = line.trim();
        if skip_depth.is_none() && trimmed.starts_with("#[cfg(test)]") {
            test_next = true;
            continue;
        }
        let opens = line.matches('{').count() as i32;
        let closes = line.matches('}').count() as i32;
        if test_next && skip_depth.is_none() {
            if opens > closes {
                skip_depth = Some(depth);
            }
            // A one-line item (a `use` or a `fn` on one line) is skipped whole.
            test_next = false;
            depth += opens - closes;
            continue;
        }
        depth += opens - closes;
        if let Some(d) = skip_depth {
            if depth <= d {
                skip_depth = None;
            }
            continue;
        }
        let declares = trimmed.starts_with("mod ")
            || trimmed.starts_with("pub mod ")
            || trimmed.starts_with("pub(crate) mod ")
            || trimmed.starts_with("pub use ")
            || trimmed.starts_with("pub(crate) use ");
        if !declares {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The modules `module` (at `path`) refers to, other than itself.
fn dependencies(module: &str, path: &Path, all: &BTreeMap<String, PathBuf>) -> BTreeSet<String> {
    let text = code(path);
    let is_mod_rs = path.file_name().unwrap() == "mod.rs";
    let own: Vec<&str> = if module.is_empty() {
        vec![]
    } else {
        module.split("::").collect()
    };
    // `super` of a file `a/b.rs` is `a`; of `a/mod.rs` (module `a`) it is the crate.
    let parent: Vec<&str> = if is_mod_rs {
        own[..own.len().saturating_sub(1)].to_vec()
    } else {
        own[..own.len() - 1].to_vec()
    };
    let mut paths: Vec<Vec<String>> = Vec::new();
    let bytes = text.as_bytes();
    for (prefix, base) in [("crate::", Vec::new()), ("super::", parent.clone())] {
        let mut from = 0;
        while let Some(at) = text[from..].find(prefix) {
            let abs = from + at;
            let start = abs + prefix.len();
            from = start;
            let preceded_by_ident =
                abs > 0 && (bytes[abs - 1].is_ascii_alphanumeric() || bytes[abs - 1] == b'_');
            if preceded_by_ident {
                continue;
            }
            let rest = &text[start..];
            let mut segs: Vec<String> = base.iter().map(|s| s.to_string()).collect();
            // Brace groups (`use super::{a, b::c}`) are read by their first
            // segment each.
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                        .collect();
                    let mut s = segs.clone();
                    s.extend(name.split("::").filter(|x| !x.is_empty()).map(String::from));
                    paths.push(s);
                }
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            segs.extend(name.split("::").filter(|x| !x.is_empty()).map(String::from));
            paths.push(segs);
        }
    }
    let mut out = BTreeSet::new();
    for p in paths {
        // The longest prefix of the path that names a module.
        for n in (1..=p.len()).rev() {
            let candidate = p[..n].join("::");
            if all.contains_key(&candidate) {
                if candidate != module {
                    out.insert(candidate);
                }
                break;
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let all = modules();
    all.iter()
        .map(|(m, p)| (m.clone(), dependencies(m, p, &all)))
        .collect()
}

/// A cycle through the graph, if it has one.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            match state.get(d.as_str()).copied().unwrap_or(0) {
                0 => {
                    if let Some(c) = visit(d, g, state, stack) {
                        return Some(c);
                    }
                }
                1 => {
                    let at = stack.iter().position(|x| x == d).unwrap();
                    let mut c = stack[at..].to_vec();
                    c.push(d.clone());
                    return Some(c);
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = visit(n, g, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

/// The graph with submodules folded into their top-level module.
fn top_level(g: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let top = |m: &str| m.split("::").next().unwrap().to_string();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, deps) in g {
        let entry = out.entry(top(m)).or_default();
        for d in deps {
            if top(d) != top(m) {
                entry.insert(top(d));
            }
        }
    }
    out
}

#[test]
fn the_module_reader_sees_known_dependencies() {
    let g = graph();
    assert!(g["fen"].contains("position"), "{:?}", g["fen"]);
    assert!(g["bitboard"].contains("geometry"), "{:?}", g["bitboard"]);
    assert!(!g["geometry"].contains("bitboard"), "{:?}", g["geometry"]);
    assert!(g.contains_key("generate::pair"));
    // A cycle planted in a copy of the graph is found.
    let mut planted = g.clone();
    planted.get_mut("geometry").unwrap().insert("fen".into());
    assert!(find_cycle(&planted).is_some());
}

#[test]
fn no_module_depends_on_one_that_depends_back_on_it() {
    let g = graph();
    assert_eq!(find_cycle(&g), None, "a cycle between modules");
    assert_eq!(
        find_cycle(&top_level(&g)),
        None,
        "a cycle between top-level modules"
    );
}

#[test]
fn verify_uses_no_part_of_the_generator() {
    let g = top_level(&graph());
    let mut seen = BTreeSet::new();
    let mut todo = vec!["verify".to_string()];
    while let Some(m) = todo.pop() {
        if seen.insert(m.clone()) {
            todo.extend(g.get(&m).into_iter().flatten().cloned());
        }
    }
    assert!(
        !seen.contains("generate"),
        "verify reaches generate through {seen:?}"
    );
}

/// An engine that depends on the library without its default features (the
/// rules engine and the prober) builds none of the command line's crates.
#[test]
fn the_prober_needs_no_command_line_crates() {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "--no-default-features",
            "--edges",
            "normal",
            "--prefix",
            "none",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(tree.contains("zstd"), "{tree}");
    for name in ["clap", "indicatif"] {
        assert!(
            !tree.lines().any(|l| l.starts_with(name)),
            "{name} in the prober's tree:\n{tree}"
        );
    }
}
