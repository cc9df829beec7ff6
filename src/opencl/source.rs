//! A program's OpenCL C source: `common.h` and its files, whole, or with only one kernel kept
//! (see [`ProgramUnit`](crate::tuning::ProgramUnit)): the other kernels' text becomes blank lines, so
//! that build logs still name the lines of the files.

use super::ClEngine;
use super::program::{COMMON_H, ClFile, ProgramId};
use crate::error::{Error, Result};
use std::ops::Range;

impl ClEngine {
    /// The source of `program`: `common.h` and its files (embedded, or read from the tuning's
    /// kernel folder), each after a `#line 1`; with only `kernel` kept where one is named and
    /// found (otherwise whole: a kernel the scan cannot find is still built, with the rest).
    pub(super) fn source(&self, program: ProgramId, kernel: Option<&str>) -> Result<String> {
        let read = |file: &ClFile| match &self.store.kernel_dir {
            None => Ok(file.text.to_string()),
            Some(dir) => {
                let path = dir.join(file.path);
                std::fs::read_to_string(&path).map_err(|e| Error::KernelSource {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                })
            }
        };
        // The header is pasted in rather than #included: no include path to get wrong.
        let mut src = read(&COMMON_H)?;
        for file in program.files() {
            src.push_str("\n#line 1\n");
            src.push_str(&read(file)?);
        }
        Ok(match kernel.and_then(|k| only_kernel(&src, k)) {
            Some(one) => one,
            None => src,
        })
    }
}

/// `src` with every `__kernel` function but those named `keep` (a name may be defined in
/// several preprocessor branches) turned into blank lines; `None` where no kernel is named
/// `keep` or the text cannot be scanned (unbalanced brackets).
pub(crate) fn only_kernel(src: &str, keep: &str) -> Option<String> {
    let spans = kernel_spans(src)?;
    if !spans.iter().any(|(name, _)| *name == keep) {
        return None;
    }
    let mut out = String::with_capacity(src.len());
    let mut at = 0;
    for (name, range) in spans.iter().filter(|(name, _)| *name != keep) {
        debug_assert!(*name != keep);
        out.push_str(&src[at..range.start]);
        out.extend(src[range.clone()].chars().filter(|&c| c == '\n'));
        at = range.end;
    }
    out.push_str(&src[at..]);
    Some(out)
}

/// Every `__kernel` function of `src`: its name and its text, from `__kernel` to the closing
/// brace of its body. Comments and character literals are skipped; `None` if a bracket is
/// unmatched.
pub(crate) fn kernel_spans(src: &str) -> Option<Vec<(&str, Range<usize>)>> {
    let b = src.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while let Some(start) = next_code(b, i, |b, j| word_at(b, j, "__kernel")) {
        // Up to the body: skip `__attribute__((..))`; the name is the identifier before the
        // first other parenthesis.
        let mut j = start + "__kernel".len();
        let mut name = None;
        let mut last_word: Option<Range<usize>> = None;
        let body = loop {
            j = skip_space_and_comments(b, j);
            let c = *b.get(j)?;
            if c == b'{' && name.is_some() {
                break j;
            }
            if c == b'(' {
                let word = last_word.take()?;
                if &src[word.clone()] != "__attribute__" && name.is_none() {
                    name = Some(&src[word]);
                }
                j = matching(b, j, b'(', b')')? + 1;
            } else if c == b'_' || c.is_ascii_alphanumeric() {
                let end = (j..b.len())
                    .find(|&k| !(b[k] == b'_' || b[k].is_ascii_alphanumeric()))
                    .unwrap_or(b.len());
                last_word = Some(j..end);
                j = end;
            } else if c == b';' || c == b'}' {
                return None;
            } else {
                j += 1;
            }
        };
        let end = matching(b, body, b'{', b'}')? + 1;
        spans.push((name?, start..end));
        i = end;
    }
    Some(spans)
}

/// Whether the identifier `word` starts at `j` (and no longer identifier does).
fn word_at(b: &[u8], j: usize, word: &str) -> bool {
    let ident = |c: u8| c == b'_' || c.is_ascii_alphanumeric();
    b[j..].starts_with(word.as_bytes())
        && (j == 0 || !ident(b[j - 1]))
        && b.get(j + word.len()).is_none_or(|&c| !ident(c))
}

/// The first position at or after `from`, outside comments and literals, where `hit` holds.
fn next_code(b: &[u8], from: usize, hit: impl Fn(&[u8], usize) -> bool) -> Option<usize> {
    let mut j = from;
    while j < b.len() {
        let k = skip_space_and_comments(b, j);
        if k != j {
            j = k;
            continue;
        }
        if b[j] == b'\'' || b[j] == b'"' {
            j = literal_end(b, j)?;
            continue;
        }
        if hit(b, j) {
            return Some(j);
        }
        j += 1;
    }
    None
}

/// The position after the white space and comments at `j`.
fn skip_space_and_comments(b: &[u8], mut j: usize) -> usize {
    loop {
        if j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        } else if b[j..].starts_with(b"//") {
            j = (j..b.len()).find(|&k| b[k] == b'\n').unwrap_or(b.len());
        } else if b[j..].starts_with(b"/*") {
            j = b[j + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len(), |p| j + 2 + p + 2);
        } else {
            return j;
        }
    }
}

/// The position after the character or string literal opening at `j`.
fn literal_end(b: &[u8], j: usize) -> Option<usize> {
    let quote = b[j];
    let mut k = j + 1;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 2,
            c if c == quote => return Some(k + 1),
            b'\n' => return None,
            _ => k += 1,
        }
    }
    None
}

/// The position of the bracket `close` matching the `open` at `j`.
fn matching(b: &[u8], j: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    let mut k = j;
    loop {
        k = next_code(b, k, |b, k| b[k] == open || b[k] == close)?;
        if b[k] == open {
            depth += 1;
        } else {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(k);
            }
        }
        k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "// __kernel void in_a_comment() {}\n\
        inline uint helper(uint x) { return x + '}'; }\n\
        __kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n\
        void first(__global uint* a) {\n  if (a) { a[0] = helper(1); } /* } */\n}\n\
        #if X\n__kernel void second(__global uint* a) { a[0] = 2; }\n\
        #else\n__kernel void second(__global uint* a) { a[0] = 3; }\n#endif\n\
        __kernel void third(uint n) { }\n";

    #[test]
    fn finds_every_kernel_and_keeps_one_with_the_line_numbers() {
        let names: Vec<&str> = kernel_spans(SRC)
            .unwrap()
            .into_iter()
            .map(|s| s.0)
            .collect();
        assert_eq!(names, ["first", "second", "second", "third"]);
        let one = only_kernel(SRC, "second").unwrap();
        assert_eq!(one.lines().count(), SRC.lines().count());
        assert!(one.contains("a[0] = 2") && one.contains("a[0] = 3"));
        assert!(!one.contains("void first") && !one.contains("void third"));
        assert!(one.contains("inline uint helper") && one.contains("#else"));
        let first = only_kernel(SRC, "first").unwrap();
        assert!(first.contains("/* } */\n}\n") && !first.contains("second"));
        assert_eq!(only_kernel(SRC, "fourth"), None);
        assert_eq!(kernel_spans("__kernel void broken(uint n) { {"), None);
    }
}
