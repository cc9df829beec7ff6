//! Verdicts on kernel families' operations (`family/operation`): whether a family's kernels, as this driver built them, answered
//! a known-answer probe as the CPU path does. Kept for the engine's life and, where the program
//! cache is on, in its folder (keyed like a program: the family's sources, the build options,
//! the device and driver), so that a later process trusts or distrusts without probing again.
//!
//! This layer only keeps verdicts; what a family is and how it is probed belong to the engine
//! and the operations (`crate::engine::Family`).

use super::cache::CacheKey;
use super::{ClEngine, ProgramId, lock};
use crate::error::Result;

/// What a known-answer probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Answered as the CPU path does.
    Trusted,
    /// Answered otherwise: what differed, in words.
    Wrong(String),
}

/// The first bytes of a verdict stored in the program cache.
const WRONG: &[u8] = b"wrong\n";
const TRUSTED: &[u8] = b"trusted\n";

impl ClEngine {
    /// The verdict on `key` (`family/operation`) this engine holds, if any.
    pub(crate) fn verdict(&self, key: &str) -> Option<Verdict> {
        lock(&self.store.verdicts).get(key).cloned()
    }

    /// Every verdict this engine holds, by `family/operation`.
    pub(crate) fn verdicts(&self) -> Vec<(String, Verdict)> {
        let mut v: Vec<_> = lock(&self.store.verdicts)
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// The program cache's key of `key`'s verdict: its family's program's sources as this engine
    /// reads them (embedded or from the kernel folder), the build options, the device.
    fn verdict_key(&self, key: &str, program: ProgramId) -> Result<CacheKey> {
        let source = self.source(program, None)?;
        Ok(CacheKey::new(
            &format!("verdict on {key}\n{source}"),
            &self.store.build_options,
            &self.store.cache_identity,
        ))
    }

    /// The verdict on `key` stored in the program cache by an earlier engine, if any (held
    /// from then on).
    pub(crate) fn stored_verdict(&self, key: &str, program: ProgramId) -> Option<Verdict> {
        let cache = self.store.disk_cache.as_ref()?;
        let entry = self.verdict_key(key, program).ok()?;
        let bytes = cache.load(&entry)?;
        let verdict = if let Some(what) = bytes.strip_prefix(WRONG) {
            Verdict::Wrong(String::from_utf8_lossy(what).into_owned())
        } else if bytes == TRUSTED {
            Verdict::Trusted
        } else {
            return None;
        };
        lock(&self.store.verdicts).insert(key.to_string(), verdict.clone());
        Some(verdict)
    }

    /// Holds `verdict` on `key` and stores it in the program cache where one is in use.
    pub(crate) fn keep_verdict(&self, key: &str, program: ProgramId, verdict: Verdict) {
        if let (Some(cache), Ok(entry)) = (
            self.store.disk_cache.as_ref(),
            self.verdict_key(key, program),
        ) {
            let bytes = match &verdict {
                Verdict::Trusted => TRUSTED.to_vec(),
                Verdict::Wrong(what) => [WRONG, what.as_bytes()].concat(),
            };
            cache.store(&entry, &bytes);
        }
        lock(&self.store.verdicts).insert(key.to_string(), verdict);
    }
}
