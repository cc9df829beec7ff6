//! rayon helpers shared by the CPU implementations of the operations.

use crate::image::ImageView;
use rayon::prelude::*;

/// Pixels per rayon task: large enough to amortise scheduling, small enough to balance.
pub(crate) const PIECE: usize = 1 << 16;

/// Maps every run of contiguous pixels of `view` (scan-order index of its first pixel, its
/// bytes) in parallel and combines the results. Packed images are cut into equal pieces
/// whatever their shape (a 1×N image parallelises too); padded rows are cut row by row.
/// `None` for an image without pixels.
pub(crate) fn map_pieces<R, M, C>(view: &ImageView<'_>, map: M, combine: C) -> Option<R>
where
    R: Send,
    M: Fn(u64, &[u8]) -> R + Sync + Send,
    C: Fn(R, R) -> R + Sync + Send,
{
    if view.pixel_count() == 0 {
        return None;
    }
    if let Some(bytes) = view.packed_bytes() {
        return bytes
            .par_chunks(PIECE * 4)
            .enumerate()
            .map(|(i, c)| map((i * PIECE) as u64, c))
            .reduce_with(&combine);
    }
    let w = view.width() as u64;
    (0..view.height())
        .into_par_iter()
        .map(|y| {
            view.row(y)
                .chunks(PIECE * 4)
                .enumerate()
                .map(|(i, c)| map(y as u64 * w + (i * PIECE) as u64, c))
                .reduce(&combine)
        })
        .flatten()
        .reduce_with(&combine)
}

/// The pixel of 4 bytes, packed like the kernels see it.
#[inline(always)]
pub(crate) fn px(c: &[u8]) -> u32 {
    u32::from_le_bytes([c[0], c[1], c[2], c[3]])
}

/// Calls `f` with the pixels of `bytes` as `u32`s: borrowed when 4-byte aligned, else copied
/// block by block into a stack buffer (user buffers may start anywhere).
#[inline]
pub(crate) fn with_u32_blocks(bytes: &[u8], block: usize, mut f: impl FnMut(usize, &[u32])) {
    if let Ok(px) = bytemuck::try_cast_slice::<u8, u32>(bytes) {
        for (i, b) in px.chunks(block).enumerate() {
            f(i * block, b);
        }
        return;
    }
    let mut buf = [0u32; 1024];
    let block = block.min(buf.len());
    for (i, b) in bytes.chunks(block * 4).enumerate() {
        let n = b.len() / 4;
        for (d, c) in buf[..n].iter_mut().zip(b.chunks_exact(4)) {
            *d = px(c);
        }
        f(i * block, &buf[..n]);
    }
}

/// Defines `$name` that runs `$body` compiled for AVX-512 or AVX2 (with FMA) when the CPU has them
/// (detected at run time), and for the baseline target otherwise: the same source, so the same
/// results (Rust never fuses a multiply and an add by itself; `mul_add` is one rounding either way).
///
/// With a leading `const NAME: usize = [avx512, avx2, baseline];` the body sees `NAME` as a
/// constant of the variant it runs in (a block size that fits each target's vector registers).
macro_rules! multiversion {
    (fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        $crate::cpu::multiversion! {
            const UNUSED_BLOCK: usize = [0, 0, 0];
            fn $name($($arg: $ty),*) -> $ret $body
        }
    };
    (
        const $c:ident: usize = [$wide:expr, $mid:expr, $base:expr];
        fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block
    ) => {
        // The versions, in a module of the function's name (which the function beside it does
        // not collide with), so that several functions share a scope; it sees its parent's names.
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[inline(always)]
            #[allow(non_upper_case_globals, unused)]
            pub(super) fn generic<const $c: usize>($($arg: $ty),*) -> $ret $body

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            pub(super) fn avx2($($arg: $ty),*) -> $ret { generic::<{ $mid }>($($arg),*) }

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
            pub(super) fn avx512($($arg: $ty),*) -> $ret { generic::<{ $wide }>($($arg),*) }
        }

        pub(crate) fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                let fma = std::is_x86_feature_detected!("fma");
                if fma
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("avx512vl")
                {
                    // SAFETY: the CPU supports AVX-512 F/BW/VL and FMA, checked just above.
                    return unsafe { $name::avx512($($arg),*) };
                }
                if fma && std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports AVX2 and FMA, checked just above.
                    return unsafe { $name::avx2($($arg),*) };
                }
            }
            $name::generic::<{ $base }>($($arg),*)
        }
    };
}
pub(crate) use multiversion;

/// A zeroed vector for a large result. On Linux the allocation (fresh, untouched zero pages
/// from `mmap`) is advised to use transparent huge pages, as NumPy does for its arrays: a
/// 64 MiB image then costs 32 page faults instead of 16384, which took more time than the blur.
pub(crate) fn alloc_zeroed<T: Copy + Default + bytemuck::Zeroable>(len: usize) -> Vec<T> {
    let v = vec![T::default(); len];
    advise_huge_pages(v.as_ptr() as usize, len * std::mem::size_of::<T>());
    v
}

/// Advises the kernel to back the whole 2 MiB pages inside `start..start + bytes` (a live,
/// not yet touched allocation) with transparent huge pages. Advice only: contents are unchanged.
pub(crate) fn advise_huge_pages(start: usize, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        if bytes >= 4 * HUGE {
            let first = start.next_multiple_of(HUGE);
            let end = (start + bytes) / HUGE * HUGE;
            if end > first {
                // SAFETY: advice only, on whole pages inside a live allocation; it changes no
                // contents and its failure is harmless (the result is ignored).
                unsafe {
                    libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, bytes);
}

/// Copies `src` into `dst` (of the same length) in pieces of 1 MiB on rayon's threads: one
/// thread copies about 10 GB/s, less than a PCIe 5 link moves (the GPU staging slots).
pub(crate) fn parallel_copy(src: &[u8], dst: &mut [u8]) {
    const PIECE_BYTES: usize = 1 << 20;
    dst.par_chunks_mut(PIECE_BYTES)
        .zip(src.par_chunks(PIECE_BYTES))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// A new image of `width × height` pixels filled by `fill` (its values, rows packed): fresh
/// memory advised to use huge pages (see `alloc_zeroed`).
pub(crate) fn fresh_result<P>(
    (width, height): (u32, u32),
    fill: impl FnOnce(&mut [P::Subpixel]) -> crate::error::Result<()>,
) -> crate::error::Result<image::ImageBuffer<P, Vec<P::Subpixel>>>
where
    P: image::Pixel,
    P::Subpixel: Default + bytemuck::Zeroable,
{
    let values = P::CHANNEL_COUNT as usize * width as usize * height as usize;
    let mut out = alloc_zeroed::<P::Subpixel>(values);
    fill(&mut out)?;
    image::ImageBuffer::from_raw(width, height, out).ok_or(crate::error::Error::ImageTooLarge {
        width: width as u64,
        height: height as u64,
        reason: "the result does not match its size",
    })
}
