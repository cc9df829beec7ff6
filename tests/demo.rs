//! Runs the demo's code on a small image with every backend and checks that every picture it
//! writes is a valid PNG of the expected size, with the same pixels as rayon's; checks the
//! demo's and the bench's command lines.

mod common;

#[path = "../examples/demo.rs"]
#[allow(dead_code)]
mod demo;

#[path = "../examples/bench/main.rs"]
#[allow(dead_code)]
mod bench;

#[test]
fn the_demo_writes_the_same_pictures_on_every_backend() {
    let img = image::imageops::thumbnail(&demo::default_image(), 240, 135);
    let mut engines = vec![clpix::Engine::cpu()];
    engines.extend(common::opencl_engines());
    // Each picture's pixels from rayon (the first engine), which every device must equal.
    let mut reference: std::collections::HashMap<std::ffi::OsString, Vec<u8>> =
        std::collections::HashMap::new();
    for (i, e) in engines.iter().enumerate() {
        let dir = std::env::temp_dir().join(format!("clpix-demo-test-{}-{i}", std::process::id()));
        let written = demo::run_demo(e, &img, &dir).expect("demo runs");
        assert!(!written.is_empty());
        for p in written {
            let bytes = std::fs::read(&p).unwrap();
            assert_eq!(
                &bytes[..8],
                b"\x89PNG\r\n\x1a\n",
                "{} is a PNG",
                p.display()
            );
            let pic = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png).unwrap();
            assert!(
                pic.width() >= img.width() && pic.height() >= 64,
                "{}: {}×{}",
                p.display(),
                pic.width(),
                pic.height()
            );
            let name = p.file_name().unwrap_or_default().to_os_string();
            let pixels = pic.into_rgba8().into_raw();
            match reference.get(&name) {
                None => assert_eq!(i, 0, "{}: not written by rayon", p.display()),
                Some(want) => assert!(
                    &pixels == want,
                    "{} on {} differs from rayon's",
                    p.display(),
                    e.backend()
                ),
            }
            reference.entry(name).or_insert(pixels);
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// The demo's command line: `--help` prints usage (clap answers it rather than running the
/// demo), an unknown flag is an error, and the documented flags parse.
#[test]
fn the_demo_command_line_is_parsed_by_clap() {
    use clap::{CommandFactory, Parser, error::ErrorKind};
    demo::Cli::command().debug_assert();
    for help in ["--help", "-h"] {
        let err = demo::Cli::try_parse_from(["demo", help]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::DisplayHelp, "{help}");
        assert_eq!(err.exit_code(), 0, "{help}");
        assert!(err.to_string().contains("--backend"), "{err}");
    }
    for bad in [
        &["demo", "--bogus"][..],
        &["demo", "--backend", "gpu"],
        &["demo", "a.png", "b.png"],
    ] {
        let err = demo::Cli::try_parse_from(bad).unwrap_err();
        assert_ne!(err.exit_code(), 0, "{bad:?}");
    }
    let err = demo::Cli::try_parse_from(["demo", "--bogus"]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownArgument);

    let cli = demo::Cli::try_parse_from(["demo"]).unwrap();
    assert!(cli.image.is_none() && cli.backend.is_none() && cli.device.is_none());
    let cli = demo::Cli::try_parse_from([
        "demo",
        "--backend",
        "opencl",
        "picture.png",
        "--device",
        "pthread",
    ])
    .unwrap();
    assert_eq!(
        cli.image.as_deref(),
        Some(std::path::Path::new("picture.png"))
    );
    assert_eq!(cli.backend, Some(demo::BackendArg::Opencl));
    assert_eq!(cli.device.as_deref(), Some("pthread"));
    let cli = demo::Cli::try_parse_from(["demo", "--backend", "cpu"]).unwrap();
    assert_eq!(cli.backend, Some(demo::BackendArg::Cpu));
}

/// The bench's command line: `--help` is answered, unknown flags are refused, and every flag
/// combination that benches/gpu-sweep.sh passes parses, with its operation names known.
#[test]
fn the_bench_command_line_is_parsed_by_clap() {
    use clap::{CommandFactory, Parser, error::ErrorKind};
    bench::Cli::command().debug_assert();
    let err = bench::Cli::try_parse_from(["bench", "--help"]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::DisplayHelp);
    assert_eq!(err.exit_code(), 0);
    for bad in [
        &["bench", "--bogus"][..],
        &["bench", "--size"],
        &["bench", "--size", "big"],
        &["bench", "--reps", "0"],
        &["bench", "--backends", "cuda"],
        &["bench", "stray"],
    ] {
        assert!(bench::Cli::try_parse_from(bad).is_err(), "{bad:?}");
    }

    let cli = bench::Cli::try_parse_from(["bench"]).unwrap();
    assert_eq!((cli.size, cli.reps), (4096, 15));
    assert!(cli.ops.is_none() && cli.device.is_none() && cli.out.is_none());
    assert_eq!(
        cli.backends,
        [bench::BackendArg::Cpu, bench::BackendArg::Opencl]
    );

    let known = bench::op_names();
    let sweep =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/benches/gpu-sweep.sh"))
            .unwrap();
    // The sweep's shell variables, as it sets them.
    let vars = [
        (
            "$ops",
            "compacted_image,compact,compacted_image_sorted,compact_sorted",
        ),
        (
            "$radii",
            "blur_w2,blur_w4,blur_w6,blur_w8,blur_w12,blur_w16,blur_w20,blur_w25",
        ),
        ("$op", "compacted_image"),
        ("$w", "20"),
        ("$f", "0"),
        ("$m", "two-pass"),
        ("$t", "horizontal"),
        ("$sh", "128,2,4,8"),
        ("$OUT", "/tmp"),
    ];
    // `$name` replaced by its value.
    let expand = |s: &str| {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let name_len = rest[i + 1..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len() - i - 1);
            let name = &rest[i..i + 1 + name_len];
            let value = vars
                .iter()
                .find(|(v, _)| *v == name)
                .unwrap_or_else(|| panic!("gpu-sweep.sh's {name} is not known here"))
                .1;
            out.push_str(value);
            rest = &rest[i + 1 + name_len..];
        }
        out + rest
    };
    let mut calls = 0;
    for line in sweep.lines() {
        for call in line.split("./bench ").skip(1) {
            // The arguments end at the redirections, pipes and `;`.
            let call = call.split(" 2>").next().unwrap();
            let call = call.split(['|', '>', ';']).next().unwrap();
            let call = expand(call);
            // Words as the shell splits them: whitespace outside double quotes.
            let mut args = vec![String::from("bench")];
            let (mut word, mut quoted) = (None::<String>, false);
            for c in call.chars() {
                match c {
                    '"' => {
                        quoted = !quoted;
                        word.get_or_insert_with(String::new);
                    }
                    c if c.is_whitespace() && !quoted => args.extend(word.take()),
                    c => word.get_or_insert_with(String::new).push(c),
                }
            }
            args.extend(word);
            let cli = bench::Cli::try_parse_from(&args)
                .unwrap_or_else(|e| panic!("gpu-sweep.sh calls bench with {args:?}: {e}"));
            for op in cli.ops.iter().flatten() {
                assert!(known.contains(&op.as_str()), "{op} in {args:?}");
            }
            // Every setting it tunes is one clpix takes.
            for t in &cli.tune {
                let (name, value) = t.split_once('=').expect("--tune NAME=VALUE");
                clpix::tuning::Tuning::default()
                    .set(name, value)
                    .unwrap_or_else(|e| panic!("gpu-sweep.sh: --tune {t}: {e}"));
            }
            calls += 1;
        }
    }
    assert!(calls >= 10, "{calls} bench calls found in gpu-sweep.sh");
}
