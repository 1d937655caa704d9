//! One table of the pair being solved, with its work file.

use super::error::GenerateError;
use crate::index::MaterialIndex;
use crate::material::Material;
use crate::memory::prefetch;
use crate::table::TableError;
use memmap2::{Mmap, UncheckedAdvice};
use std::path::{Path, PathBuf};

/// One table of the pair being solved: its index and its finished values,
/// kept in a work file (a byte per state as [`Value::to_byte`] codes it, 0 =
/// not solved yet), written with positioned writes and read through a memory
/// map of it. (Two bytes per state, as before, wrote and read back twice the
/// bytes: 11.5 GB for the largest pair.)
pub(super) struct PairTable {
    pub(super) material: Material,
    pub(super) index: MaterialIndex,
    pub(super) slice_len: u64,
    pub(super) store: Mmap,
    /// The work file itself, for writing finished values, and its path.
    pub(super) file: std::fs::File,
    pub(super) path: PathBuf,
}

impl PairTable {
    /// The table of `material` (indexed by `index`) with its work file at
    /// `path`: emptied if `fresh`, else as an interrupted run left it.
    pub(super) fn open(
        path: &Path,
        material: Material,
        index: MaterialIndex,
        fresh: bool,
    ) -> Result<PairTable, GenerateError> {
        let io = |source| {
            GenerateError::Table(TableError::Io {
                path: path.to_path_buf(),
                source,
            })
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(fresh)
            .open(path)
            .map_err(io)?;
        file.set_len(index.size()).map_err(io)?;
        // Safety: the work file is private to this run (a name no reader
        // opens) and is not resized while mapped; it changes only through
        // positioned writes to slices that no reader is reading yet.
        let store = unsafe { Mmap::map(&file) }.map_err(io)?;
        Ok(PairTable {
            material,
            slice_len: index.slice_len(),
            index,
            store,
            file,
            path: path.to_path_buf(),
        })
    }

    /// Make the values written so far durable.
    pub(super) fn sync(&self) -> Result<(), GenerateError> {
        self.file.sync_data().map_err(|source| {
            GenerateError::Table(TableError::Io {
                path: self.path.clone(),
                source,
            })
        })
    }

    /// Unmap the pages read so far, keeping the resident size to what one
    /// batch reads instead of growing to both work files.
    pub(super) fn release_pages(&self) {
        // Safety: no slice of the mapping is borrowed here. For a shared
        // file mapping MADV_DONTNEED only unmaps the pages: they stay in the
        // page cache (written back, or synced at the next checkpoint), and
        // later reads fault them back in, so no data is lost.
        let _ = unsafe { self.store.unchecked_advise(UncheckedAdvice::DontNeed) };
    }

    #[inline]
    pub(super) fn get(&self, idx: u64) -> u8 {
        self.store[idx as usize]
    }

    /// Ask the processor to fetch the value [`PairTable::get`] will read (a
    /// hint only: a page not mapped yet is not faulted in).
    #[inline]
    pub(super) fn prefetch(&self, idx: u64) {
        if let Some(b) = self.store.get(idx as usize) {
            prefetch(b);
        }
    }
}
