//! The operations, one folder each: the API and semantics (`mod.rs`), the CPU path
//! (`cpu.rs`, the executable specification), the variant choice (`plan.rs`) and the OpenCL
//! launchers (`cl.rs`) beside their kernels.

pub(crate) mod blobs;
pub(crate) mod blur;
pub(crate) mod compact;
pub(crate) mod histogram;
mod probe;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod select;
mod warm_up;

use crate::opencl::ProgramId;

/// `fn $lookup(format) -> &'static Family`: seven kernel families of `$program` checked by
/// `$probe`, one per pixel format (each format a build of its own, with its own verdict), named
/// `<$prefix>_mono8`, `_mono16`, `_mono_f32`, `_rgb8`, `_rgba8`, `_rgba16`, `_rgba_f32`.
macro_rules! format_families {
    ($vis:vis fn $lookup:ident, $prefix:literal, $program:expr, $probe:expr) => {
        $vis fn $lookup(format: $crate::spec::Format) -> &'static $crate::engine::Family {
            use $crate::engine::Family;
            use $crate::spec::Format;
            macro_rules! one {
                ($suffix:literal) => {
                    Family { name: concat!($prefix, $suffix), program: $program, probe: $probe }
                };
            }
            static MONO8: Family = one!("_mono8");
            static MONO16: Family = one!("_mono16");
            static MONO_F32: Family = one!("_mono_f32");
            static RGB8: Family = one!("_rgb8");
            static RGBA8: Family = one!("_rgba8");
            static RGBA16: Family = one!("_rgba16");
            static RGBA_F32: Family = one!("_rgba_f32");
            match format {
                Format::Luma8 => &MONO8,
                Format::Luma16 => &MONO16,
                Format::LumaF32 => &MONO_F32,
                Format::Rgb8 => &RGB8,
                Format::Rgba8 => &RGBA8,
                Format::Rgba16 => &RGBA16,
                Format::RgbaF32 => &RGBA_F32,
            }
        }
    };
}
pub(crate) use format_families;

/// `value` as the type `B` it is (an RGBA8 path's result as the generic result type of an
/// `Rgba<u8>` call), an error if it were not.
pub(crate) fn same_type<A: 'static, B: 'static>(value: A) -> crate::error::Result<B> {
    let boxed: Box<dyn std::any::Any> = Box::new(value);
    boxed.downcast::<B>().map(|b| *b).map_err(|_| {
        crate::error::Error::invalid(
            "pixel type",
            std::any::type_name::<B>(),
            "the pixel type of the input",
        )
    })
}

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
