//! The operating system's calls the generator uses beyond the standard
//! library: free disk space, hints to the page cache, and positioned file
//! reads and writes. Each has a fallback for systems other than Unix, where
//! it does without the hint or the figure.

use std::path::Path;

/// Disk space free for an unprivileged user in the file system of `dir`, in
/// bytes, if known.
#[cfg(unix)]
pub fn free_disk(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // Safety: `path` is a NUL-terminated string and `st` room for the result,
    // which is read only when the call succeeds.
    let st = unsafe {
        if libc::statvfs(path.as_ptr(), st.as_mut_ptr()) != 0 {
            return None;
        }
        st.assume_init()
    };
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// [`free_disk`] where the system has no `statvfs`: not known.
#[cfg(not(unix))]
pub fn free_disk(_dir: &Path) -> Option<u64> {
    None
}

/// The share of the first `len` bytes of `file` that is in the page cache;
/// `None` if the kernel does not say.
#[cfg(unix)]
pub(super) fn resident_fraction(file: &std::fs::File, len: usize) -> Option<f64> {
    if len == 0 {
        return Some(1.0);
    }
    // SAFETY: the map is only passed to `mincore`, which reads no byte of it,
    // so a change to the file meanwhile cannot matter.
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
    let mut resident = vec![0u8; len.div_ceil(page)];
    // SAFETY: `map` covers `len` bytes from a page-aligned address, and
    // `resident` has a byte for each of its pages, as `mincore` requires.
    let ok = unsafe { libc::mincore(map.as_ptr() as *mut _, len, resident.as_mut_ptr()) } == 0;
    ok.then(|| resident.iter().filter(|&&b| b & 1 != 0).count() as f64 / resident.len() as f64)
}

/// [`resident_fraction`] where the system cannot tell: not known.
#[cfg(not(unix))]
pub(super) fn resident_fraction(_file: &std::fs::File, _len: usize) -> Option<f64> {
    None
}

/// Tell the kernel that the first `len` bytes of `file` are about to be
/// read, so that pages it dropped from the page cache come back in large
/// requests rather than one small read at a time. Only a hint: an error
/// changes nothing.
pub(super) fn will_read(file: &std::fs::File, len: u64) {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        // Safety: a plain system call on an open descriptor; it reads no memory.
        unsafe {
            libc::posix_fadvise(
                file.as_raw_fd(),
                0,
                len as libc::off_t,
                libc::POSIX_FADV_WILLNEED,
            );
        }
    }
    #[cfg(not(unix))]
    let _ = (file, len);
}

/// Read exactly `buf.len()` bytes of `file` from `offset`, without moving a
/// shared file position (so threads may read one file at once).
pub(super) fn read_exact_at(
    file: &std::fs::File,
    buf: &mut [u8],
    offset: u64,
) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let mut done = 0;
        while done < buf.len() {
            match std::os::windows::fs::FileExt::seek_read(
                file,
                &mut buf[done..],
                offset + done as u64,
            )? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                n => done += n,
            }
        }
        Ok(())
    }
}

/// Write all of `buf` into `file` at `offset`, without moving a shared file
/// position (so threads may write one file at once).
pub(super) fn write_all_at(file: &std::fs::File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let mut done = 0;
        while done < buf.len() {
            match std::os::windows::fs::FileExt::seek_write(
                file,
                &buf[done..],
                offset + done as u64,
            )? {
                0 => return Err(std::io::ErrorKind::WriteZero.into()),
                n => done += n,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file just written is in the page cache, so a kept file is copied
    /// after the pair that wrote it; a file of no bytes counts as resident.
    #[test]
    fn a_file_just_written_is_resident() {
        let dir = std::env::temp_dir().join(format!("ftb-resident-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("values");
        std::fs::write(&path, vec![7u8; 3 << 20]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let f = resident_fraction(&file, 3 << 20).unwrap();
        assert!(f >= 0.9, "{f}");
        assert_eq!(resident_fraction(&file, 0), Some(1.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
