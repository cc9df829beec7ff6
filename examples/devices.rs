//! Lists every OpenCL platform and device with its limits, and which backend `Engine::new()`
//! picks and why (like `clinfo -l`, but about clpix's choice).

use clap::Parser;

/// Lists every OpenCL platform and device with its limits, and which backend `Engine::new()`
/// picks and why.
#[derive(Parser, Debug)]
#[command(name = "devices", version)]
struct Cli {}

fn main() {
    Cli::parse();
    match clpix::devices() {
        Ok(list) => {
            for d in &list {
                println!(
                    "[{}] {} — {} ({}), {} compute units, {:.1} GiB global, {} MiB max buffer, \
                     {} KiB local, max work-group {}, {}, driver {}",
                    d.index,
                    d.platform,
                    d.name,
                    d.device_type,
                    d.compute_units,
                    d.global_mem_bytes as f64 / (1u64 << 30) as f64,
                    d.max_alloc_bytes >> 20,
                    d.local_mem_bytes >> 10,
                    d.max_work_group_size,
                    d.opencl_c_version,
                    d.driver_version
                );
            }
        }
        Err(e) => println!("no OpenCL devices: {e}"),
    }
    match clpix::Engine::new() {
        Ok(e) => {
            println!("Engine::new() picks: {}", e.backend());
            if let Some(dir) = e.program_cache_dir() {
                println!("program cache: {}", dir.display());
            }
        }
        Err(e) => println!("Engine::new() fails: {e}"),
    }
}
