//! The operations, one folder each: the API and semantics (`mod.rs`), the CPU path
//! (`cpu.rs`, the executable specification), the variant choice (`plan.rs`) and the OpenCL
//! launchers (`cl.rs`) beside their kernels.

pub(crate) mod blur;
pub(crate) mod compact;
pub(crate) mod histogram;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod select;
mod warm_up;

#[cfg(test)]
mod tests {
    use crate::cl::Kernel;

    /// Every kernel name an operation launches is a kernel of its program's source.
    #[test]
    fn every_kernel_name_is_a_kernel_of_its_program() {
        let lists: [&[Kernel]; 6] = [
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
                "{} is not a kernel of {}.cl",
                k.name,
                k.program.name()
            );
        }
    }
}
