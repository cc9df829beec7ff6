//! The persistent program cache, on every OpenCL device (`ProgramCache::All`: by default CPU
//! devices, whose drivers cache for themselves, store nothing): a miss builds from source and stores
//! the binaries; a hit loads them (`Engine::programs` says which) with the same results;
//! damaged entries (random bytes, truncated) are rebuilt; a read-only cache stores nothing; an
//! unusable folder means no cache, not an error; several processes filling one empty cache at
//! once all get the CPU's results and leave whole entries; after `Engine::warm_up`, no call
//! makes a program ready; a new blur radius is specialised in the background; one kernel a
//! program (the GPUs' default) gives the same bits as whole files. Each test has its own folder.

mod common;

use clpix::tuning::{ProgramCache, ProgramUnit, Tuning};
use clpix::{Engine, ProgramOrigin};
use common::*;
use std::path::{Path, PathBuf};

fn fresh_dir(label: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("clpix-pc-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// One engine a device, in the GPU layout, with the cache in `dir` in `mode`.
fn engines_with(dir: &Path, mode: ProgramCache) -> Vec<Engine> {
    let mut tuning = Tuning::default();
    tuning.cache = mode;
    tuning.cache_dir = Some(dir.to_path_buf());
    gpu_layout_engines_tuned(&tuning)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "bin"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A few operations over three programs (reduce, histogram, compact), as text.
fn some_ops(e: &Engine, img: &TestImage) -> Vec<String> {
    vec![
        format!("{:?}", e.extreme(img.view(), clpix::Extreme::Brightest)),
        format!("{:?}", e.histogram_luminance(img.view())),
        format!(
            "{:?}",
            e.compact(img.view(), 200, clpix::CompactOrder::LuminanceDescending)
        ),
    ]
}

fn origins(e: &Engine) -> Vec<ProgramOrigin> {
    e.programs().iter().map(|p| p.origin).collect()
}

#[test]
fn a_miss_builds_and_stores_a_hit_loads_with_the_same_results() {
    let dir = fresh_dir("hit");
    let img = make_image(61, 17, 4, Content::Random, 3);
    let expected = some_ops(&Engine::cpu(), &img);
    let first = engines_with(&dir, ProgramCache::All);
    for e in &first {
        assert_eq!(e.program_cache_dir(), Some(dir.as_path()));
        assert_eq!(some_ops(e, &img), expected, "{}", e.backend());
        assert!(origins(e).iter().all(|o| *o == ProgramOrigin::Source));
        // The binaries are stored on threads of their own.
        e.wait_for_builds();
    }
    let stored = entries(&dir);
    assert!(first.is_empty() || stored.len() >= 3, "entries: {stored:?}");
    // New engines (a later process, as far as programs go) load every program.
    for e in &engines_with(&dir, ProgramCache::All) {
        assert_eq!(some_ops(e, &img), expected, "{}", e.backend());
        let o = origins(e);
        assert!(
            !o.is_empty() && o.iter().all(|o| *o == ProgramOrigin::Cache),
            "{}: {o:?}",
            e.backend()
        );
    }
    // Off: everything from source, nothing read.
    for e in &engines_with(&dir, ProgramCache::Off) {
        assert_eq!(e.program_cache_dir(), None);
        assert_eq!(some_ops(e, &img), expected);
        assert!(origins(e).iter().all(|o| *o == ProgramOrigin::Source));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_entries_are_rebuilt_and_a_read_only_cache_stores_nothing() {
    let dir = fresh_dir("damage");
    let img = make_image(33, 9, 0, Content::FewLevels, 5);
    let expected = some_ops(&Engine::cpu(), &img);
    for e in &engines_with(&dir, ProgramCache::All) {
        assert_eq!(some_ops(e, &img), expected);
        e.wait_for_builds();
    }
    let stored = entries(&dir);
    // Random bytes in half the entries, the others truncated.
    let mut seed = 9u64;
    for (i, p) in stored.iter().enumerate() {
        let bytes = std::fs::read(p).unwrap();
        let damaged = if i % 2 == 0 {
            (0..bytes.len())
                .map(|_| splitmix(&mut seed) as u8)
                .collect()
        } else {
            bytes[..bytes.len() / 2].to_vec()
        };
        std::fs::write(p, damaged).unwrap();
    }
    for e in &engines_with(&dir, ProgramCache::All) {
        assert_eq!(some_ops(e, &img), expected, "{}", e.backend());
        assert!(origins(e).iter().all(|o| *o == ProgramOrigin::Source));
        e.wait_for_builds();
    }
    // Rebuilt and stored whole again: a new engine loads them.
    assert_eq!(entries(&dir).len(), stored.len());
    for e in &engines_with(&dir, ProgramCache::All) {
        assert_eq!(some_ops(e, &img), expected);
        assert!(origins(e).iter().all(|o| *o == ProgramOrigin::Cache));
    }
    // Read-only: loads what is there, stores nothing new.
    let ro = fresh_dir("readonly");
    std::fs::create_dir_all(&ro).unwrap();
    for e in &engines_with(&ro, ProgramCache::ReadOnly) {
        assert_eq!(some_ops(e, &img), expected);
        e.wait_for_builds();
    }
    assert!(entries(&ro).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&ro);
}

#[test]
fn an_unusable_folder_is_no_cache_not_an_error() {
    let file = fresh_dir("file");
    std::fs::write(&file, b"a file, not a folder").unwrap();
    let img = make_image(20, 20, 0, Content::Random, 8);
    let expected = some_ops(&Engine::cpu(), &img);
    for e in &engines_with(&file, ProgramCache::All) {
        assert_eq!(e.program_cache_dir(), None);
        assert_eq!(some_ops(e, &img), expected);
    }
    let _ = std::fs::remove_file(&file);
}

/// Run by `several_processes_fill_one_empty_cache_at_once` in child processes, with the
/// folder in `CLPIX_TEST_CACHE_DIR`.
#[test]
#[ignore = "a child process of several_processes_fill_one_empty_cache_at_once"]
fn child_fills_the_cache() {
    let Some(dir) = std::env::var_os("CLPIX_TEST_CACHE_DIR") else {
        return;
    };
    let img = make_image(47, 13, 0, Content::Random, 4);
    let expected = some_ops(&Engine::cpu(), &img);
    for e in &engines_with(Path::new(&dir), ProgramCache::All) {
        assert_eq!(some_ops(e, &img), expected, "{}", e.backend());
        e.wait_for_builds();
    }
}

#[test]
fn several_processes_fill_one_empty_cache_at_once() {
    let dir = fresh_dir("processes");
    let exe = std::env::current_exe().unwrap();
    // Started together, then waited for.
    let running: Vec<_> = (0..3)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--ignored", "--exact", "child_fills_the_cache"])
                .env("CLPIX_TEST_CACHE_DIR", &dir)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let children: Vec<_> = running
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for c in &children {
        assert!(
            c.status.success() && String::from_utf8_lossy(&c.stdout).contains("1 passed"),
            "{}\n{}",
            String::from_utf8_lossy(&c.stdout),
            String::from_utf8_lossy(&c.stderr)
        );
    }
    // No temporary files left; every entry whole (a new engine loads them all).
    let left: Vec<_> = std::fs::read_dir(&dir)
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(
        left.iter()
            .all(|p| p.extension().is_some_and(|x| x == "bin")),
        "{left:?}"
    );
    let img = make_image(47, 13, 0, Content::Random, 4);
    for e in &engines_with(&dir, ProgramCache::All) {
        some_ops(e, &img);
        assert!(origins(e).iter().all(|o| *o == ProgramOrigin::Cache));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// After `warm_up` with the radii a caller will use, no operation builds or loads a program.
#[test]
fn after_warm_up_no_call_makes_a_program_ready() {
    let dir = fresh_dir("warm");
    let img = make_image(300, 70, 8, Content::Random, 6);
    let cpu = Engine::cpu();
    let expected = every_op(&cpu, img.view().into());
    assert!(cpu.warm_up(&[2]).unwrap().is_empty());
    let mut all = engines_with(&dir, ProgramCache::All);
    all.extend(opencl_engines());
    for e in &all {
        let made = e.warm_up(&[2, 4, 5, 9]).unwrap();
        let before = e.programs().len();
        assert!(made.len() + 1 >= before, "{}: {made:?}", e.backend());
        assert_eq!(every_op(e, img.view().into()), expected, "{}", e.backend());
        let after = e.programs();
        assert_eq!(
            after.len(),
            before,
            "{}: made ready after warm_up: {:?}",
            e.backend(),
            &after[before..]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// After `warm_up` and `warm_up_formats` with every format and the blur radii a caller will use,
/// no operation on any format builds or loads a program, and every answer is the CPU's.
#[test]
fn after_warm_up_formats_no_call_makes_a_program_ready() {
    use clpix::Format::*;
    let dir = fresh_dir("warm-formats");
    let img = make_image(300, 70, 8, Content::Random, 6);
    let cpu = Engine::cpu();
    let expected = every_format_op(&cpu, &img);
    let formats = [Luma8, Luma16, LumaF32, Rgb8, Rgba8, Rgba16, RgbaF32];
    assert!(cpu.warm_up_formats(&formats, &[2]).unwrap().is_empty());
    let mut all = engines_with(&dir, ProgramCache::All);
    all.extend(opencl_engines());
    for e in &all {
        e.warm_up(&[2, 9]).unwrap();
        e.warm_up_formats(&formats, &[2, 9]).unwrap();
        let before = e.programs().len();
        assert_eq!(every_format_op(e, &img), expected, "{}", e.backend());
        let after = e.programs();
        assert_eq!(
            after.len(),
            before,
            "{}: made ready after warm_up_formats: {:?}",
            e.backend(),
            &after[before..]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The GPU blur at a radius runs the generic passes until its `specialise_after`-th call (2 by
/// default), which starts the radius-built programs' builds in the background; after
/// `wait_for_builds` they are ready and the next call takes them; every call gives the CPU's
/// bits. With `build_wait`, and on rusticl, the first call builds them itself.
#[test]
fn a_new_radius_is_specialised_in_the_background() {
    let img = make_image(150, 60, 4, Content::Random, 12);
    let cpu = Engine::cpu();
    for (wait, after) in [
        (false, None),
        (false, Some(1)),
        (false, Some(3)),
        (true, None),
    ] {
        let mut tuning = Tuning::default();
        tuning.cache = ProgramCache::Off;
        tuning.build_wait = wait;
        tuning.specialise_after = after;
        for e in gpu_layout_engines_tuned(&tuning) {
            // Rusticl takes no threads of clpix's own: its calls build what they need, as
            // with `build_wait` (docs/design.md, "Other implementations").
            let wait = wait || e.backend().to_string().contains("rusticl");
            let calls = if wait { 1 } else { after.unwrap_or(2) };
            for radius in [2u32, 7, 13] {
                let blur = clpix::GaussianBlur::new(radius);
                let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
                let tag = format!("BLUR_W={radius} ");
                let specialised = |e: &Engine| {
                    e.programs()
                        .iter()
                        .any(|p| format!("{} ", p.variant).contains(&tag))
                };
                for call in 1..=calls {
                    let got = e.gaussian_blur(img.view(), &blur).unwrap();
                    assert!(got == expected, "{} w {radius}", e.backend());
                    if call < calls {
                        e.wait_for_builds();
                        assert!(!specialised(&e), "{} w {radius} call {call}", e.backend());
                    }
                }
                if wait {
                    let generic_there =
                        e.backend().to_string().contains("rusticl 22") && radius > 2;
                    assert!(
                        specialised(&e) || generic_there,
                        "{} w {radius}",
                        e.backend()
                    );
                }
                e.wait_for_builds();
                // Rusticl 22 runs the register kernel (w 2) and the generic passes instead of
                // the band and radius-built kernels (docs/design.md, "Other implementations").
                let generic_there = e.backend().to_string().contains("rusticl 22") && radius > 2;
                assert!(
                    specialised(&e) || generic_there,
                    "{} w {radius}: {:?}",
                    e.backend(),
                    e.programs()
                );
                let second = e.gaussian_blur(img.view(), &blur).unwrap();
                assert!(second == expected, "{} w {radius}", e.backend());
            }
        }
    }
}

/// One kernel a program ([`ProgramUnit::Kernel`], the default on GPUs) on every device, in the
/// GPU layout, against the CPU: every operation and a scan longer than one work-group's gives
/// the same bits; each record names its one kernel and none is made twice; a second engine
/// loads them all from the cache; after `warm_up`, no call (the long scan included) makes a
/// program ready. Whole files: every record is a file.
#[test]
fn one_kernel_a_program_gives_the_same_bits_as_whole_files() {
    let dir = fresh_dir("unit");
    let img = make_image(300, 70, 8, Content::Random, 7);
    let cpu = Engine::cpu();
    let expected = every_op(&cpu, img.view().into());
    let long: Vec<u32> = (0..70_001u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 9)
        .collect();
    let long_expected = cpu.exclusive_scan(&long).unwrap();
    let mut tuning = Tuning::default();
    tuning.programs = Some(ProgramUnit::Kernel);
    tuning.cache = ProgramCache::All;
    tuning.cache_dir = Some(dir.clone());
    for round in 0..2 {
        for e in &gpu_layout_engines_tuned(&tuning) {
            assert_eq!(every_op(e, img.view().into()), expected, "{}", e.backend());
            assert_eq!(e.exclusive_scan(&long).unwrap(), long_expected);
            e.wait_for_builds();
            let records = e.programs();
            assert!(records.iter().all(|r| r.kernel.is_some()), "{records:?}");
            let mut keys: Vec<_> = records
                .iter()
                .map(|r| (r.program, r.kernel, r.variant.clone()))
                .collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), records.len(), "made twice: {records:?}");
            if round == 1 {
                assert!(
                    records.iter().all(|r| r.origin == ProgramOrigin::Cache),
                    "{}: {records:?}",
                    e.backend()
                );
            }
        }
    }
    tuning.cache = ProgramCache::Off;
    tuning.programs = Some(ProgramUnit::File);
    for e in &gpu_layout_engines_tuned(&tuning) {
        assert_eq!(every_op(e, img.view().into()), expected, "{}", e.backend());
        assert!(e.programs().iter().all(|r| r.kernel.is_none()));
    }
    tuning.programs = Some(ProgramUnit::Kernel);
    for e in &gpu_layout_engines_tuned(&tuning) {
        e.warm_up(&[2, 4, 5, 9]).unwrap();
        let before = e.programs().len();
        assert_eq!(every_op(e, img.view().into()), expected, "{}", e.backend());
        assert_eq!(e.exclusive_scan(&long).unwrap(), long_expected);
        let after = e.programs();
        assert_eq!(
            after.len(),
            before,
            "{}: {:?}",
            e.backend(),
            &after[before..]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
