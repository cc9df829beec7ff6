//! `CLPIX_COMPACT_RELOCATE=warp` forces NVIDIA's warp kernels: on an NVIDIA GPU they give the CPU
//! path's result; on any other device (without the emulated intrinsics) the call is an error
//! that names the variable, never a build by a compiler that does not know their PTX (PoCL 3.1
//! built it into wrong code, PoCL 5 aborted). Its own test binary: the variable is set before
//! any engine exists.

mod common;

use clpix::{Engine, Error};
use common::*;

#[test]
fn forced_warp_kernels_run_on_nvidia_and_are_refused_elsewhere() {
    std::env::remove_var("CLPIX_BUILD_OPTIONS");
    std::env::set_var("CLPIX_COMPACT_RELOCATE", "warp");
    let img = make_image(1024, 700, 0, Content::Random, 5);
    let expected = Engine::cpu().compact(img.view(), 400).unwrap();
    let engines = gpu_layout_engines();
    assert!(!engines.is_empty() || std::env::var_os("CLPIX_REQUIRE_OPENCL").is_none());
    for e in &engines {
        let nvidia = e.device().is_some_and(|d| d.platform.contains("NVIDIA"));
        match e.compact(img.view(), 400) {
            Ok(hits) => {
                assert!(nvidia, "{}: ran the warp kernels", e.backend());
                assert!(hits == expected, "{}: hits", e.backend());
            }
            Err(Error::InvalidEnvironment { var, .. }) => {
                assert!(!nvidia, "{}: refused", e.backend());
                assert_eq!(var, "CLPIX_COMPACT_RELOCATE");
            }
            Err(other) => panic!("{}: {other}", e.backend()),
        }
    }
}
