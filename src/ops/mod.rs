//! The operations, one folder each: the API and semantics (`mod.rs`), the CPU path
//! (`cpu.rs`, the executable specification), the variant choice (`plan.rs`) and the OpenCL
//! launchers (`cl.rs`) beside their kernels.

pub(crate) mod blobs;
pub(crate) mod blur;
pub(crate) mod common;
pub(crate) mod compact;
pub(crate) mod histogram;
mod probe;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod select;
mod warm_up;

use crate::opencl::ProgramId;

/// Every program the operations declare.
pub(crate) const PROGRAMS: [ProgramId; 11] = [
    blobs::kernels::PROGRAM,
    reduce::kernels::PROGRAM,
    reduce::kernels::TYPED_PROGRAM,
    histogram::kernels::PROGRAM,
    histogram::kernels::TYPED_PROGRAM,
    scan::kernels::PROGRAM,
    compact::kernels::PROGRAM,
    compact::kernels::TYPED_PROGRAM,
    blur::kernels::PROGRAM,
    blur::kernels::TYPED_PROGRAM,
    select::kernels::PROGRAM,
];

#[cfg(test)]
mod tests {
    use crate::opencl::Kernel;

    /// Every kernel name an operation launches is a kernel of its program's source.
    #[test]
    fn every_kernel_name_is_a_kernel_of_its_program() {
        let lists: [&[Kernel]; 7] = [
            super::blobs::kernels::ALL,
            super::blur::kernels::ALL,
            super::compact::kernels::ALL,
            super::histogram::kernels::ALL,
            super::reduce::kernels::ALL,
            super::scan::kernels::ALL,
            super::select::kernels::ALL,
        ];
        for k in lists.into_iter().flatten() {
            let src = k.program.embedded();
            let declared = src.match_indices(k.name).any(|(at, _)| {
                // The declaration reaches back to the end of the previous item.
                let before = &src[..at];
                let head = &before[before.rfind([';', '}']).map_or(0, |i| i + 1)..];
                let after = &src[at + k.name.len()..];
                head.contains("__kernel")
                    && head.trim_end().ends_with("void")
                    && after.starts_with('(')
            });
            assert!(
                declared,
                "{} is not a kernel of the {} program",
                k.name,
                k.program.name()
            );
        }
    }

    /// Every program holds kernels, and the compaction's program holds the scan's passes it
    /// launches from there.
    #[test]
    fn every_program_is_embedded_with_kernels() {
        for p in super::PROGRAMS {
            assert!(
                p.embedded().contains("__kernel"),
                "{} has no kernel",
                p.name()
            );
        }
        let compact = super::compact::kernels::PROGRAM;
        for k in super::scan::kernels::ALL {
            let all = compact.embedded();
            assert!(
                crate::opencl::kernel_spans(&all)
                    .is_some_and(|s| s.iter().any(|(n, _)| *n == k.name)),
                "the compact program lacks {}",
                k.name
            );
        }
    }

    #[test]
    fn every_program_keeps_each_of_its_kernels_alone() {
        for p in super::PROGRAMS {
            let src = p.embedded();
            let spans = crate::opencl::kernel_spans(&src)
                .unwrap_or_else(|| panic!("{} unscanned", p.name()));
            let declared = src.matches("__kernel").count();
            let in_comments = src
                .lines()
                .filter(|l| l.contains("__kernel") && l.trim_start().starts_with("//"))
                .count();
            assert_eq!(spans.len(), declared - in_comments, "{}", p.name());
            for (name, _) in &spans {
                let one = crate::opencl::only_kernel(&src, name).unwrap();
                assert_eq!(one.lines().count(), src.lines().count());
                let left = crate::opencl::kernel_spans(&one).unwrap();
                assert!(left.iter().all(|(n, _)| n == name), "{}: {name}", p.name());
            }
        }
    }

    /// `CLPIX_KERNEL_DIR=cl` runs the kernels as they are: every file a program embeds is the
    /// file at its path under the repository's `cl/`, and `cl/` holds no other kernel file.
    #[test]
    fn the_embedded_kernels_are_the_cl_folder() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cl");
        let mut embedded = std::collections::BTreeSet::new();
        for p in super::PROGRAMS {
            for f in p.files() {
                let on_disk = std::fs::read_to_string(root.join(f.path)).unwrap();
                assert_eq!(on_disk, f.text, "{}", f.path);
                embedded.insert(f.path.to_string());
            }
        }
        let mut found = std::collections::BTreeSet::new();
        for dir in std::fs::read_dir(&root).unwrap() {
            let dir = dir.unwrap().path();
            // Top-level headers are programs' files too (`formats.h`), but for `common.h`,
            // which every program pastes first.
            if dir.is_file() && !dir.ends_with("common.h") {
                found.insert(dir.file_name().unwrap().to_string_lossy().to_string());
            }
            if dir.is_dir() {
                for f in std::fs::read_dir(&dir).unwrap() {
                    let f = f.unwrap().path();
                    let rel = f
                        .strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/");
                    found.insert(rel);
                }
            }
        }
        assert_eq!(found, embedded);
    }
}
