//! What a driver does that OpenCL does not allow, found by asking it rather than by its name.
//!
//! Two answers of Mesa's rusticl 22.3 (llvmpipe) were wrong without an error (docs/design.md,
//! "Other implementations"):
//! - **loops stop early**: llvmpipe's code generator ends every loop of a work-item after 65,535
//!   iterations in all (a guard against endless shader loops), so a work-item that walks a long
//!   range leaves its end unvisited;
//! - **`CL_KERNEL_WORK_GROUP_SIZE` is a placeholder**: 32 for every kernel, even one whose
//!   `reqd_work_group_size` is 128 and which runs correctly in groups of 128;
//! - **`CL_KERNEL_LOCAL_MEM_SIZE` is twice the kernel's `__local` arrays**: a kernel with
//!   32,000 bytes of them is reported to need 64,000 of a device's 32,768, and runs.
//!
//! Implementations known not to do either (NVIDIA, PoCL, Intel, Oclgrind) are not asked; any other
//! builds one small program when an engine opens, runs it, and the engine plans around what it
//! finds.

use super::device::{DeviceInfo, Vendor};
use crate::error::{Error, Result};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE, ClMem};
use opencl3::program::Program;
use opencl3::types::{CL_BLOCKING, cl_device_id};

/// What an engine plans around on its device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Quirks {
    /// The iterations a work-item's loops run in all before the driver stops them; `None`:
    /// no limit seen (or the implementation is known to have none).
    pub loop_cap: Option<u64>,
    /// Whether `CL_KERNEL_WORK_GROUP_SIZE` contradicted a kernel's own required size while the
    /// kernel ran right at that size: the answer is not used, the device's limit is.
    pub kernel_wg_placeholder: bool,
    /// Whether `CL_KERNEL_LOCAL_MEM_SIZE` reported twice a kernel's `__local` arrays: the
    /// answers are halved.
    pub static_local_doubled: bool,
    /// Rusticl 22 (keyed by name and version, not found by asking): the blur's band and
    /// radius-built kernels, which keep rows in local-memory rings across barriers, read rows
    /// as zero in the first steps of a strip; the register kernel and the generic passes are
    /// right.
    pub ring_kernels_wrong: bool,
}

/// Iterations the loop probe asks for: beyond every cap known (65,535).
const LOOP_PROBE: u32 = 1 << 20;

const SOURCE: &str = r#"
__kernel void loop_count(uint n, __global uint* out) {
    uint c = 0;
    for (uint i = 0; i < n; ++i) c += 1u + (i & 0u);
    out[get_global_id(0)] = c;
}
__kernel __attribute__((reqd_work_group_size(PROBE_WG, 1, 1)))
void group_order(__global uint* out) {
    __local uint s[PROBE_WG];
    uint l = get_local_id(0);
    s[l] = (uint)get_global_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = s[PROBE_WG - 1 - l];
}
"#;

/// The group size the placeholder probe runs at: the streaming kernels' largest (256), or less
/// where the device allows less.
fn probe_wg(info: &DeviceInfo) -> usize {
    let most = 256.min(info.max_work_group_size.max(1));
    1 << most.ilog2()
}

/// Asks `info`'s device what it does wrong (nothing for the implementations known not to).
pub(crate) fn probe(
    info: &DeviceInfo,
    context: &Context,
    queue: &CommandQueue,
    device: cl_device_id,
) -> Result<Quirks> {
    match Vendor::of(info) {
        Vendor::Nvidia | Vendor::Pocl | Vendor::Intel | Vendor::Oclgrind => {
            return Ok(Quirks::default());
        }
        Vendor::Rusticl | Vendor::Other => {}
    }
    let started = std::time::Instant::now();
    let wg = probe_wg(info);
    let mut program = Program::create_from_source(context, SOURCE)
        .map_err(|e| Error::cl("clCreateProgramWithSource", e.0))?;
    program
        .build(&[device], &format!("-D PROBE_WG={wg}"))
        .map_err(|e| Error::cl("clBuildProgram (the driver probe)", e.0))?;
    let out = {
        // SAFETY: a device-only buffer of `wg` uints, no host pointer.
        unsafe {
            Buffer::<u32>::create(context, CL_MEM_READ_WRITE, wg, std::ptr::null_mut())
                .map_err(|e| Error::cl("clCreateBuffer", e.0))?
        }
    };
    let read = |n: usize| -> Result<Vec<u32>> {
        let mut host = vec![0u32; n];
        // SAFETY: `host` holds `n` <= wg elements; the read blocks.
        unsafe { queue.enqueue_read_buffer(&out, CL_BLOCKING, 0, &mut host, &[]) }
            .map_err(|e| Error::cl("clEnqueueReadBuffer", e.0))?;
        Ok(host)
    };
    let run = |k: &ClKernel, global: usize, local: usize| -> Result<()> {
        let (g, l) = ([global], [local]);
        // SAFETY: the kernel's arguments are set; the sizes are 1-D arrays alive for the call.
        unsafe {
            queue.enqueue_nd_range_kernel(k.get(), 1, std::ptr::null(), g.as_ptr(), l.as_ptr(), &[])
        }
        .map_err(|e| Error::cl("clEnqueueNDRangeKernel (the driver probe)", e.0))?;
        Ok(())
    };

    let count =
        ClKernel::create(&program, "loop_count").map_err(|e| Error::cl("clCreateKernel", e.0))?;
    // SAFETY: the arguments match loop_count(uint, __global uint*).
    unsafe {
        count
            .set_arg(0, &LOOP_PROBE)
            .and_then(|_| count.set_arg(1, &out.get()))
            .map_err(|e| Error::cl("clSetKernelArg", e.0))?;
    }
    run(&count, 1, 1)?;
    let counted = read(1)?[0];
    let loop_cap = (counted < LOOP_PROBE).then_some(counted as u64);

    let order =
        ClKernel::create(&program, "group_order").map_err(|e| Error::cl("clCreateKernel", e.0))?;
    let said = order
        .get_work_group_size(device)
        .map_err(|e| Error::cl("clGetKernelWorkGroupInfo", e.0))?;
    let declared = 4 * wg as u64;
    let static_local_doubled = order
        .get_local_mem_size(device)
        .map_err(|e| Error::cl("clGetKernelWorkGroupInfo", e.0))?
        == 2 * declared;
    let mut kernel_wg_placeholder = false;
    if said < wg {
        // The driver says the kernel cannot run at its own required size: run it there, and
        // believe the answer only if the run fails or answers wrong.
        // SAFETY: the argument matches group_order(__global uint*).
        unsafe { order.set_arg(0, &out.get()) }.map_err(|e| Error::cl("clSetKernelArg", e.0))?;
        let ran = run(&order, wg, wg).and_then(|()| read(wg));
        kernel_wg_placeholder =
            matches!(ran, Ok(v) if v.iter().enumerate().all(|(i, &x)| x as usize == wg - 1 - i));
    }
    let ring_kernels_wrong =
        Vendor::of(info) == Vendor::Rusticl && super::driver_major(&info.driver_version) <= 22;
    let quirks = Quirks {
        ring_kernels_wrong,
        loop_cap,
        kernel_wg_placeholder,
        static_local_doubled,
    };
    log::debug!(
        "clpix: driver probe on {} ({} {}) in {:.1} ms: {quirks:?}",
        info.name,
        info.platform,
        info.driver_version,
        started.elapsed().as_secs_f64() * 1e3
    );
    if let Some(cap) = loop_cap {
        log::info!(
            "clpix: {} ({} {}) stops a work-item's loops after {cap} iterations: its kernels \
             run in the coalesced layout, in enough work-items that none loops that long",
            info.name,
            info.platform,
            info.driver_version
        );
    }
    Ok(quirks)
}
