//! The persistent program cache: program binaries (`CL_PROGRAM_BINARIES`) on disk, one file an
//! entry, keyed by everything that changes the binary, so that a later process loads them with
//! `clCreateProgramWithBinary` instead of compiling the source again.
//!
//! An entry is `<key hash>.bin`: a magic line, the full key text (compared on load, so that a
//! hash collision is a miss, never a wrong program), the binary's length and checksum, the
//! binary. It is written to a temporary file in the same folder and renamed into place, so that
//! a reader sees a whole entry or none, and several processes may fill one cache at once. Any
//! load failure (missing, truncated, corrupt, another key, a binary the driver refuses) deletes
//! the entry and the program is built from source. An unusable folder means no cache and one
//! `log` warning. Loads touch an entry's modification time; when the folder grows past its bound
//! the least recently used entries go.

use crate::config::ProgramCache;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The first bytes of every entry (its format's version).
const MAGIC: &[u8] = b"clpix program cache 1\n";

/// The default bound on the cache folder's size.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 512 << 20;

/// A usable cache folder.
#[derive(Debug)]
pub(crate) struct DiskCache {
    dir: PathBuf,
    writable: bool,
    max_bytes: u64,
}

/// What an entry is for: the full text of its key, and its file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheKey {
    text: String,
    file: String,
}

/// 64-bit FNV-1a from `seed`: stable across Rust versions and platforms, unlike `std`'s hasher.
fn fnv1a(bytes: &[u8], seed: u64) -> u64 {
    bytes.iter().fold(seed, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// 128 bits of hash: two FNV-1a runs from different seeds.
fn hash128(bytes: &[u8]) -> String {
    let a = fnv1a(bytes, 0xcbf2_9ce4_8422_2325);
    let b = fnv1a(bytes, 0x8422_2325_cbf2_9ce4);
    format!("{a:016x}{b:016x}")
}

impl CacheKey {
    /// The key of a program built from `source` with `options` for the device described by
    /// `device` (platform, device, vendor, versions, address bits), by this version of clpix.
    pub(crate) fn new(source: &str, options: &str, device: &str) -> CacheKey {
        let text = format!(
            "clpix {}\noptions {options}\ndevice {device}\nsource {}\n",
            env!("CARGO_PKG_VERSION"),
            hash128(source.as_bytes())
        );
        let file = format!("{}.bin", hash128(text.as_bytes()));
        CacheKey { text, file }
    }
}

/// The folders tried, in order: `CLPIX_CACHE_DIR` (given), `$XDG_CACHE_HOME/clpix`,
/// `~/.cache/clpix`, the temporary folder's `clpix`.
fn candidates(given: Option<&Path>) -> Vec<PathBuf> {
    if let Some(d) = given {
        return vec![d.to_path_buf()];
    }
    let mut v = Vec::new();
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        v.push(PathBuf::from(x).join("clpix"));
    }
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        v.push(PathBuf::from(h).join(".cache").join("clpix"));
    }
    v.push(std::env::temp_dir().join("clpix"));
    v
}

/// A unique temporary file name in the cache folder (process, counter).
fn temp_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        ".tmp-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Whether `dir` exists (made if missing) and a file can be written in it.
fn usable(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(temp_name());
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

impl DiskCache {
    /// The cache `mode` asks for, in `dir` or the first usable folder of the default chain;
    /// `None` (with one `log` warning) when the cache is off or no folder is usable. A
    /// read-only cache needs only a folder that exists.
    pub(crate) fn open(mode: ProgramCache, dir: Option<&Path>, max_bytes: u64) -> Option<Self> {
        let writable = match mode {
            ProgramCache::Off => return None,
            ProgramCache::ReadOnly => false,
            ProgramCache::On | ProgramCache::All => true,
        };
        let mut why = Vec::new();
        for d in candidates(dir) {
            let ok = match writable {
                true => usable(&d),
                false => std::fs::read_dir(&d).map(|_| ()),
            };
            match ok {
                Ok(()) => {
                    return Some(DiskCache {
                        dir: d,
                        writable,
                        max_bytes,
                    });
                }
                Err(e) => why.push(format!("{}: {e}", d.display())),
            }
        }
        log::warn!(
            "clpix: no program cache (set CLPIX_CACHE_DIR to a writable folder): {}",
            why.join("; ")
        );
        None
    }

    /// The folder in use.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The binary stored under `key`, if its entry is whole and is `key`'s; a damaged or
    /// foreign entry is deleted.
    pub(crate) fn load(&self, key: &CacheKey) -> Option<Vec<u8>> {
        let path = self.dir.join(&key.file);
        let bytes = std::fs::read(&path).ok()?;
        match parse(&bytes, key) {
            Some(binary) => {
                if self.writable {
                    // Least recently used first when evicting: a load counts as a use.
                    let _ = std::fs::File::options()
                        .append(true)
                        .open(&path)
                        .and_then(|f| f.set_modified(std::time::SystemTime::now()));
                }
                Some(binary.to_vec())
            }
            None => {
                log::warn!(
                    "clpix: program cache entry {} is damaged: removed",
                    path.display()
                );
                self.remove(key);
                None
            }
        }
    }

    /// Deletes `key`'s entry (one the driver refused, or damaged).
    pub(crate) fn remove(&self, key: &CacheKey) {
        if self.writable {
            let _ = std::fs::remove_file(self.dir.join(&key.file));
        }
    }

    /// Stores `binary` under `key`: written whole to a temporary file, then renamed into
    /// place; then the folder is trimmed to its bound. Failures are logged, never errors.
    pub(crate) fn store(&self, key: &CacheKey, binary: &[u8]) {
        if !self.writable || binary.is_empty() {
            return;
        }
        let mut entry = Vec::with_capacity(MAGIC.len() + key.text.len() + binary.len() + 24);
        entry.extend_from_slice(MAGIC);
        entry.extend_from_slice(&(key.text.len() as u64).to_le_bytes());
        entry.extend_from_slice(key.text.as_bytes());
        entry.extend_from_slice(&(binary.len() as u64).to_le_bytes());
        entry.extend_from_slice(&fnv1a(binary, 0xcbf2_9ce4_8422_2325).to_le_bytes());
        entry.extend_from_slice(binary);
        let tmp = self.dir.join(temp_name());
        let written = std::fs::write(&tmp, &entry)
            .and_then(|()| std::fs::rename(&tmp, self.dir.join(&key.file)));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            log::warn!("clpix: program cache {}: {e}", self.dir.display());
            return;
        }
        self.evict();
    }

    /// Removes the least recently used entries while the folder holds more than its bound.
    fn evict(&self) {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let now = std::time::SystemTime::now();
        let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = read
            .filter_map(|e| e.ok())
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                // A temporary file an hour old is left over from a process that ended
                // mid-write.
                if name.starts_with(".tmp-") {
                    let stale = e
                        .metadata()
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| now.duration_since(t).is_ok_and(|d| d.as_secs() > 3600));
                    if stale {
                        let _ = std::fs::remove_file(e.path());
                    }
                }
                name.ends_with(".bin")
            })
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, m.len(), e.path()))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        if total <= self.max_bytes {
            return;
        }
        entries.sort();
        for (_, len, path) in entries {
            if total <= self.max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// The binary of a whole entry for `key`, or `None`.
fn parse<'a>(bytes: &'a [u8], key: &CacheKey) -> Option<&'a [u8]> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (len, rest) = take_u64(rest)?;
    let (text, rest) = rest.split_at_checked(usize::try_from(len).ok()?)?;
    if text != key.text.as_bytes() {
        return None;
    }
    let (len, rest) = take_u64(rest)?;
    let (sum, binary) = take_u64(rest)?;
    (binary.len() as u64 == len && fnv1a(binary, 0xcbf2_9ce4_8422_2325) == sum).then_some(binary)
}

fn take_u64(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = bytes.split_at_checked(8)?;
    Some((u64::from_le_bytes(head.try_into().ok()?), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(label: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("clpix-cache-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn entries_round_trip_and_damage_is_a_miss_that_removes_the_entry() {
        let dir = temp_dir("unit");
        let c = DiskCache::open(ProgramCache::On, Some(&dir), DEFAULT_MAX_BYTES).unwrap();
        let k = CacheKey::new("kernel void f() {}", "-D A=1", "dev");
        assert_eq!(c.load(&k), None);
        c.store(&k, b"binary bytes");
        assert_eq!(c.load(&k).as_deref(), Some(&b"binary bytes"[..]));
        // Another key (options, device, source) misses.
        for other in [
            CacheKey::new("kernel void f() {}", "-D A=2", "dev"),
            CacheKey::new("kernel void f() {}", "-D A=1", "dev2"),
            CacheKey::new("kernel void g() {}", "-D A=1", "dev"),
        ] {
            assert_ne!(other.file, k.file);
            assert_eq!(c.load(&other), None);
        }
        let path = dir.join(&k.file);
        let whole = std::fs::read(&path).unwrap();
        // Truncated, a flipped byte, random bytes: each a miss, and the entry is gone.
        let mut flipped = whole.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        for damaged in [whole[..whole.len() - 3].to_vec(), flipped, vec![7u8; 64]] {
            std::fs::write(&path, damaged).unwrap();
            assert_eq!(c.load(&k), None);
            assert!(!path.exists());
        }
        // An entry of another key under this key's name (a collision) is a miss.
        let other = CacheKey::new("x", "", "dev");
        c.store(&other, b"other");
        std::fs::rename(dir.join(&other.file), &path).unwrap();
        assert_eq!(c.load(&k), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_folder_is_trimmed_to_its_bound_least_recently_used_first() {
        let dir = temp_dir("evict");
        let c = DiskCache::open(ProgramCache::On, Some(&dir), 3000).unwrap();
        let keys: Vec<_> = (0..4)
            .map(|i| CacheKey::new(&format!("src {i}"), "", "dev"))
            .collect();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(100);
        for (i, k) in keys.iter().enumerate() {
            c.store(k, &[i as u8; 1000]);
            // Distinct ages: entry i is older than entry i + 1.
            let f = std::fs::File::options()
                .append(true)
                .open(dir.join(&k.file))
                .unwrap();
            f.set_modified(old + std::time::Duration::from_secs(i as u64))
                .unwrap();
        }
        // Each entry is about 1.1 KB: after the fourth store, the oldest went.
        assert!(c.load(&keys[0]).is_none());
        assert!(c.load(&keys[3]).is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unusable_folder_is_no_cache() {
        let file = temp_dir("file");
        std::fs::write(&file, b"not a folder").unwrap();
        assert!(DiskCache::open(ProgramCache::On, Some(&file), DEFAULT_MAX_BYTES).is_none());
        assert!(DiskCache::open(ProgramCache::ReadOnly, Some(&file), DEFAULT_MAX_BYTES).is_none());
        assert!(DiskCache::open(ProgramCache::Off, None, DEFAULT_MAX_BYTES).is_none());
        let _ = std::fs::remove_file(&file);
    }
}
