//! The kernels of `blur.cl`, `blur_radius.cl` and `blur_f32.cl` that this operation launches, by
//! name: typed, so that a misspelt name fails to compile, and checked against the source by a test
//! (`crate::ops`).

use crate::opencl::{Kernel, ProgramId, cl_file};

/// The program this operation declares: the generic kernels and shared helpers (`blur.cl`), the
/// programs built per radius (`blur_radius.cl`), the f32 kernels (`blur_f32.cl`) and the NVIDIA-
/// only tensor-core passes (`blur_nv.cl`).
pub(crate) const PROGRAM: ProgramId = ProgramId::new(
    "blur",
    &[
        cl_file!("blur/border.h"),
        cl_file!("blur/blur.cl"),
        cl_file!("blur/blur_radius.cl"),
        cl_file!("blur/blur_f32.cl"),
        cl_file!("blur/blur_nv.cl"),
    ],
);

/// The blur of every format other than RGBA8 and RGBA f32, one program per format
/// (`CLPIX_FORMAT`).
pub(crate) const TYPED_PROGRAM: ProgramId = ProgramId::new(
    "blur_typed",
    &[
        cl_file!("formats.h"),
        cl_file!("blur/border.h"),
        cl_file!("blur/typed.cl"),
    ],
);

pub(crate) const BLUR_TYPED_H: Kernel = Kernel::new(TYPED_PROGRAM, "blur_typed_h");
pub(crate) const BLUR_TYPED_V: Kernel = Kernel::new(TYPED_PROGRAM, "blur_typed_v");
pub(crate) const BLUR_TYPED_V4: Kernel = Kernel::new(TYPED_PROGRAM, "blur_typed_v4");
pub(crate) const BLUR_BAND_U8: Kernel = Kernel::new(PROGRAM, "blur_band_u8");
pub(crate) const BLUR_BAND_V_F32: Kernel = Kernel::new(PROGRAM, "blur_band_v_f32");
pub(crate) const BLUR_BAND_V_U8: Kernel = Kernel::new(PROGRAM, "blur_band_v_u8");
pub(crate) const BLUR_FUSED_BAND_F32: Kernel = Kernel::new(PROGRAM, "blur_fused_band_f32");
pub(crate) const BLUR_FUSED_F32: Kernel = Kernel::new(PROGRAM, "blur_fused_f32");
pub(crate) const BLUR_FUSED_REG_F32: Kernel = Kernel::new(PROGRAM, "blur_fused_reg_f32");
pub(crate) const BLUR_FUSED_REG_U8: Kernel = Kernel::new(PROGRAM, "blur_fused_reg_u8");
pub(crate) const BLUR_H_F32: Kernel = Kernel::new(PROGRAM, "blur_h_f32");
pub(crate) const BLUR_H_F32_DIRECT: Kernel = Kernel::new(PROGRAM, "blur_h_f32_direct");
pub(crate) const BLUR_H_RAD_F32: Kernel = Kernel::new(PROGRAM, "blur_h_rad_f32");
pub(crate) const BLUR_H_U8: Kernel = Kernel::new(PROGRAM, "blur_h_u8");
pub(crate) const BLUR_H_U8_DIRECT: Kernel = Kernel::new(PROGRAM, "blur_h_u8_direct");
pub(crate) const BLUR_HM_U8: Kernel = Kernel::new(PROGRAM, "blur_hm_u8");
pub(crate) const BLUR_HS_U8: Kernel = Kernel::new(PROGRAM, "blur_hs_u8");
pub(crate) const BLUR_RING_F32: Kernel = Kernel::new(PROGRAM, "blur_ring_f32");
pub(crate) const BLUR_RING_U8: Kernel = Kernel::new(PROGRAM, "blur_ring_u8");
pub(crate) const BLUR_V_F32: Kernel = Kernel::new(PROGRAM, "blur_v_f32");
pub(crate) const BLUR_V_RAD_F32: Kernel = Kernel::new(PROGRAM, "blur_v_rad_f32");
pub(crate) const BLUR_V_U8: Kernel = Kernel::new(PROGRAM, "blur_v_u8");
pub(crate) const BLUR_VM_U8: Kernel = Kernel::new(PROGRAM, "blur_vm_u8");
pub(crate) const BLUR_VS_RAD_F32: Kernel = Kernel::new(PROGRAM, "blur_vs_rad_f32");
pub(crate) const BLUR_VS_U8: Kernel = Kernel::new(PROGRAM, "blur_vs_u8");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[
    BLUR_TYPED_H,
    BLUR_TYPED_V,
    BLUR_TYPED_V4,
    BLUR_BAND_U8,
    BLUR_BAND_V_F32,
    BLUR_BAND_V_U8,
    BLUR_FUSED_BAND_F32,
    BLUR_FUSED_F32,
    BLUR_FUSED_REG_F32,
    BLUR_FUSED_REG_U8,
    BLUR_H_F32,
    BLUR_H_F32_DIRECT,
    BLUR_H_RAD_F32,
    BLUR_H_U8,
    BLUR_H_U8_DIRECT,
    BLUR_HM_U8,
    BLUR_HS_U8,
    BLUR_RING_F32,
    BLUR_RING_U8,
    BLUR_V_F32,
    BLUR_V_RAD_F32,
    BLUR_V_U8,
    BLUR_VM_U8,
    BLUR_VS_RAD_F32,
    BLUR_VS_U8,
];
