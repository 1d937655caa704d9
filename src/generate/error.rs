//! Why generation failed.

use crate::material::Material;
use crate::table::TableError;
use std::path::PathBuf;

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A table could not be read or written.
    #[error(transparent)]
    Table(TableError),
    /// A finished table this run reads is damaged.
    #[error("{0}; remove the file and run generate again, which generates it anew")]
    Damaged(TableError),
    /// A table needed for captures or promotions is not there.
    #[error("table {0} is needed first (generate it, or run generate without --material)")]
    Missing(String),
    /// Solving a pair would need more memory than allowed.
    #[error("solving {material} needs about {needed_gib:.2} GiB of memory, more than the {limit_gib:.2} GiB allowed (--max-memory); lower the need by freeing memory, or raise --max-memory if the estimate is too cautious")]
    TooBig {
        /// The first material of the pair.
        material: Material,
        /// Estimated need.
        needed_gib: f64,
        /// The limit.
        limit_gib: f64,
    },
    /// The working memory of a batch could not be mapped.
    #[error(
        "cannot map {bytes} bytes of working memory: {source} (lower --max-memory or free memory)"
    )]
    Memory {
        /// The size asked for.
        bytes: usize,
        /// The error.
        source: std::io::Error,
    },
    /// A distance to win too long for the work files' byte per state.
    #[error("{material}: a value with a distance of {dtw} plies, longer than the generator's work files hold (252)")]
    TooLong {
        /// The material of the table.
        material: Material,
        /// The distance in plies.
        dtw: u16,
    },
    /// The output directory could not be created.
    #[error("cannot create {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl From<TableError> for GenerateError {
    /// A missing table is one to generate first; other errors of a table
    /// are passed on.
    fn from(e: TableError) -> GenerateError {
        match e {
            TableError::Missing { file } => GenerateError::Missing(file),
            e @ (TableError::Corrupt { .. }
            | TableError::Version { .. }
            | TableError::Mismatch { .. }) => GenerateError::Damaged(e),
            e => GenerateError::Table(e),
        }
    }
}
