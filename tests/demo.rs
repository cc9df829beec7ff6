//! Runs the demo's code on a small image with every backend and checks that every picture it
//! writes is a valid PNG of the expected size.

mod common;

#[path = "../examples/demo.rs"]
#[allow(dead_code)]
mod demo;

#[test]
fn the_demo_writes_valid_pictures_on_every_backend() {
    let img = image::imageops::thumbnail(&demo::default_image(), 240, 135);
    let mut engines = vec![clpix::Engine::cpu()];
    engines.extend(common::opencl_engines());
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
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
