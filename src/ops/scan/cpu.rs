//! The CPU path of the scan: the executable specification.

use crate::cpu::alloc_zeroed;
use rayon::prelude::*;

/// Elements per rayon task of the scan.
pub(super) const SCAN_PIECE: usize = 1 << 16;

pub(super) fn cpu_scan(data: &[u32]) -> Vec<u32> {
    let sums: Vec<u32> = data
        .par_chunks(SCAN_PIECE)
        .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
        .collect();
    let mut offsets = Vec::with_capacity(sums.len());
    let mut run = 0u32;
    for s in sums {
        offsets.push(run);
        run = run.wrapping_add(s);
    }
    let mut out = alloc_zeroed::<u32>(data.len());
    out.par_chunks_mut(SCAN_PIECE)
        .zip(data.par_chunks(SCAN_PIECE))
        .zip(offsets)
        .for_each(|((o, d), mut run)| {
            for (o, &d) in o.iter_mut().zip(d) {
                *o = run;
                run = run.wrapping_add(d);
            }
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_scan_wraps() {
        let v: Vec<u32> = (0..200_000u32)
            .map(|i| i.wrapping_mul(2654435761))
            .collect();
        let s = cpu_scan(&v);
        let mut run = 0u32;
        for (o, d) in s.iter().zip(&v) {
            assert_eq!(*o, run);
            run = run.wrapping_add(*d);
        }
    }
}
