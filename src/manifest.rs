//! The manifest: one line per table (`tables/MANIFEST`), with its
//! statistics and the checksum of its values, as `generate` writes it and
//! `verify` compares against it.

use crate::material::Material;
use crate::stats::TableStats;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The comment lines that open a manifest. The last names the checksum's
/// definition: a manifest without it was written by an older version, with
/// another checksum (see [`manifest_is_current`]).
pub const MANIFEST_HEADER: &str = "# frisian-tb table manifest: one line per table, written by `frisian-tb generate`.\n\
# rules material states wins draws losses longest_win checksum\n\
# checksum: manifest checksum 2 (XXH64 of the XXH64 digests of 16,384-state chunks of 16-bit values; docs/FORMAT.md)\n";

/// Whether manifest text `text` has checksums as this version computes
/// them (version 1, FNV-1a over every state, is not compared: its lines
/// would all differ).
pub fn manifest_is_current(text: &str) -> bool {
    let declaration = MANIFEST_HEADER.lines().last().expect("a header line");
    text.lines().any(|l| l == declaration)
}

/// Why a manifest could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The manifest.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file's header does not name this version's checksum.
    #[error("{path}: not a manifest of this version (its header does not name manifest checksum 2); `frisian-tb generate` over the tables writes a current one")]
    OldVersion {
        /// The manifest.
        path: PathBuf,
    },
}

/// The lines of a manifest, one per table, by rule set and material.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// Lines (fields joined by single spaces) by their order in the file.
    lines: BTreeMap<Key, String>,
}

/// Where a table's line goes: by rule set, then in build order (pieces, men,
/// name; [`Material::all`]); a name that is no material goes last.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    rules: String,
    order: (u32, u32),
    material: String,
}

impl Key {
    fn new(rules: &str, material: &str) -> Key {
        let order = material
            .parse::<Material>()
            .map_or((u32::MAX, u32::MAX), |m| (m.pieces(), m.men()));
        Key {
            rules: rules.to_string(),
            order,
            material: material.to_string(),
        }
    }
}

impl Manifest {
    /// An empty manifest.
    pub fn new() -> Manifest {
        Manifest::default()
    }

    /// The table lines of manifest text (comments and blank lines skipped;
    /// fields joined by single spaces), whatever its version.
    pub fn parse_any_version(text: &str) -> Manifest {
        let mut out = Manifest::new();
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if let [rules, material, ..] = fields[..] {
                out.lines
                    .insert(Key::new(rules, material), fields.join(" "));
            }
        }
        out
    }

    /// The manifest at `path`, which must be of this version.
    pub fn read(path: &Path) -> Result<Manifest, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if !manifest_is_current(&text) {
            return Err(ManifestError::OldVersion {
                path: path.to_path_buf(),
            });
        }
        Ok(Manifest::parse_any_version(&text))
    }

    /// The line of a table, if listed.
    pub fn get(&self, rules: &str, material: &str) -> Option<&str> {
        self.lines
            .get(&Key::new(rules, material))
            .map(String::as_str)
    }

    /// Set a table's line from its statistics (replacing any it had).
    pub fn insert(&mut self, stats: &TableStats) {
        self.lines.insert(
            Key::new(&stats.rules, &stats.material),
            stats.manifest_line(),
        );
    }

    /// The number of tables listed.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether no table is listed.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The lines, in the file's order: `(rules, material, line)`.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.lines
            .iter()
            .map(|(k, l)| (k.rules.as_str(), k.material.as_str(), l.as_str()))
    }

    /// The manifest as a file holds it: the header, then a line per table.
    pub fn to_text(&self) -> String {
        let mut text = String::from(MANIFEST_HEADER);
        for line in self.lines.values() {
            text.push_str(line);
            text.push('\n');
        }
        text
    }

    /// Write the manifest to `path`: in full under a temporary name, then
    /// renamed, so that a reader never sees half a manifest and a failed
    /// write leaves none. `durable`: synced to disk before and after the
    /// rename.
    pub fn write(&self, path: &Path, durable: bool) -> Result<(), ManifestError> {
        let io = |source| ManifestError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
        tmp_name.push(".tmp");
        let tmp = path.with_file_name(tmp_name);
        let written = std::fs::File::create(&tmp)
            .and_then(|mut f| {
                use std::io::Write;
                f.write_all(self.to_text().as_bytes())?;
                if durable {
                    f.sync_all()?;
                }
                Ok(())
            })
            .and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        // Make the rename itself durable, as the table files' renames are.
        if durable {
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
            if let Ok(d) = std::fs::File::open(dir.unwrap_or(Path::new("."))) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines come out in rule-set and build order whatever order they were
    /// read in, the header first; a line that is replaced keeps its place.
    #[test]
    fn a_manifest_round_trips_in_build_order() {
        let text = format!(
            "{MANIFEST_HEADER}official KMvK 1 0 1 0 0 0000000000000000\n\
             official KvK 7350 1296 6050 4 1 0123456789abcdef\n\
             lidraughts KvK 7350 1 1 1 1 0000000000000000\n"
        );
        let m = Manifest::parse_any_version(&text);
        assert_eq!(m.len(), 3);
        let order: Vec<(&str, &str)> = m.iter().map(|(r, t, _)| (r, t)).collect();
        assert_eq!(
            order,
            [
                ("lidraughts", "KvK"),
                ("official", "KvK"),
                ("official", "KMvK")
            ]
        );
        assert_eq!(
            m.get("official", "KvK"),
            Some("official KvK 7350 1296 6050 4 1 0123456789abcdef")
        );
        assert_eq!(Manifest::parse_any_version(&m.to_text()), m);
        assert!(manifest_is_current(&m.to_text()));
    }

    /// A manifest without this version's checksum line is refused by name.
    #[test]
    fn an_old_manifest_is_refused() {
        let dir = std::env::temp_dir().join(format!("ftb-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("MANIFEST");
        std::fs::write(
            &path,
            "# frisian-tb table manifest\nofficial KvK 1 1 0 0 1 00\n",
        )
        .unwrap();
        assert!(matches!(
            Manifest::read(&path),
            Err(ManifestError::OldVersion { .. })
        ));
        let mut m = Manifest::new();
        m.insert(
            &TableStats::from_manifest_line("official KvK 7350 1296 6050 4 1 0123456789abcdef")
                .unwrap(),
        );
        m.write(&path, true).unwrap();
        assert_eq!(Manifest::read(&path).unwrap(), m);
        assert!(!dir.join("MANIFEST.tmp").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
