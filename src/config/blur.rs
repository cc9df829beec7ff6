//! The GPU blur's tuning (the `blur.` settings): its kernels and shapes, read from the environment
//! with the helpers of [`super`].

/// The GPU RGBA8 blur's kernels and shapes (the `blur.` settings); `None` everywhere is the
/// default choice by radius and device.
///
/// ```
/// let b = clpix::tuning::BlurTuning::default();
/// assert!(b.kernel.is_none() && b.tensor.is_none());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlurTuning {
    /// `blur.kernel`: the kernels forced; one that does not build is an error.
    pub kernel: Option<BlurKernel>,
    /// `blur.columns=1|2`: blocks of columns a work-item of the fused kernel takes.
    pub columns: Option<u32>,
    /// `blur.adjacent=1|2|4`: adjacent columns in each block of the fused kernel.
    pub adjacent: Option<u32>,
    /// `blur.band=T,C,P,R[,S]`: the band kernel's shape.
    pub band: Option<BlurBand>,
    /// `blur.channels=1|2|4`: channels a work-item of the radius-built vertical pass
    /// takes.
    pub channels: Option<u32>,
    /// `blur.hpixels=4|8`: pixels a work-item of the radius-built horizontal pass takes.
    pub hpixels: Option<u32>,
    /// `blur.vrows=0|4|8|16`: output rows a block of the radius-built vertical pass
    /// (a window of them and their 2w neighbours in registers); 0: a ring of rows unrolled.
    pub vrows: Option<u32>,
    /// `blur.tensor=0|1|horizontal|vertical`: which radius-built passes run on NVIDIA's
    /// tensor cores, as (horizontal, vertical); forced on another device it is an error.
    pub tensor: Option<(bool, bool)>,
    /// `blur.permute=0|1`: whether the fused register kernel moves bytes with NVIDIA's
    /// byte permute (inline PTX, by default where it builds); forced on another device it is
    /// an error.
    pub permute: Option<bool>,
    /// `blur.f32_kernel=tile|registers|band|radius|two-pass`: the f32 blur's kernels on GPUs (`None`: the
    /// default by radius, see [`BlurF32Kernel`]); a forced kernel that does not fit or build is
    /// an error.
    pub f32_kernel: Option<BlurF32Kernel>,
    /// `blur.f32_channels=1|2|4`: channels a work-item of the f32 register kernel takes.
    pub f32_channels: Option<u32>,
    /// `blur.f32_columns=1|2`: columns a work-item of the f32 register kernel takes.
    pub f32_columns: Option<u32>,
    /// `blur.f32_rows=8|16|32`: output rows a work-item of the f32 radius-built vertical
    /// pass takes where it takes pixel columns (`f32_vrows` 0).
    pub f32_rows: Option<u32>,
    /// `blur.f32_vrows=0|4|8|16`: output rows a block of the f32 radius-built vertical
    /// pass walking strips a channel a work-item; 0: pixel columns, `f32_rows` rows each.
    pub f32_vrows: Option<u32>,
    /// `blur.typed_rows=4|8|16|32`: output rows a work-item of the vertical pass of the other
    /// formats' blur takes (`blur/typed.cl`).
    pub typed_rows: Option<u32>,
    /// `blur.typed_vector=1|4`: adjacent channel values a work-item of that vertical pass
    /// takes (4 where a row holds a multiple of 4).
    pub typed_vector: Option<u32>,
}

/// The GPU f32 blur's kernels (`blur.f32_kernel`).
///
/// ```
/// assert_ne!(clpix::tuning::BlurF32Kernel::Tile, clpix::tuning::BlurF32Kernel::Registers);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlurF32Kernel {
    /// `tile` (also `fused`): both passes in one generic kernel, a tile's horizontal results in
    /// local memory (w ≤ 16, where the local memory holds the tile).
    Tile,
    /// `registers`: both passes in one kernel built per radius, the output rows in flight in
    /// registers.
    Registers,
    /// `band`: both passes in one kernel built per radius, in column bands of 64 pixels: rows
    /// filtered 8 at a time into local memory, each work-item's window of them in registers
    /// (up to w = 32).
    Band,
    /// `radius`: the two passes built per radius (up to w = 64).
    Radius,
    /// `two-pass`: the generic two passes, any radius.
    TwoPass,
}

/// The GPU RGBA8 blur's kernels (`blur.kernel`).
///
/// ```
/// assert_ne!(clpix::tuning::BlurKernel::Band, clpix::tuning::BlurKernel::TwoPass);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlurKernel {
    /// `registers`: the fused kernel built per radius (up to w = 16).
    Registers,
    /// `band`: the fused band kernel built per radius (up to w = 32).
    Band,
    /// `radius`: the two passes built per radius (up to w = 32; 64 on the tensor cores).
    Radius,
    /// `two-pass`: the generic two passes, any radius.
    TwoPass,
}

/// The band kernel's shape (`blur.band=T,C,P,R[,S]`), checked when parsed: T
/// work-items (128 or 256), C channels (1, 2 or 4), P pixels (4 or 8) with T × C / 4 a
/// multiple of P, R rows (4, 8, 16 or 32) and S rows a strip (256 when left out; the default
/// shapes take 512 up to w = 8 and 1024 beyond).
///
/// ```
/// let b = clpix::tuning::BlurBand::parse("128,2,8,16").unwrap();
/// assert_eq!((b.threads(), b.strip()), (128, 256));
/// assert!(clpix::tuning::BlurBand::parse("128,3,8,8").is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlurBand {
    threads: u32,
    channels: u32,
    pixels: u32,
    rows: u32,
    strip: u32,
}

impl BlurBand {
    /// `T,C,P,R[,S]`, or `None` unless the kernel can take that shape.
    ///
    /// ```
    /// assert!(clpix::tuning::BlurBand::parse("256,4,8,32,128").is_some());
    /// ```
    pub fn parse(v: &str) -> Option<BlurBand> {
        let n = v
            .split(',')
            .map(|x| x.trim().parse::<u32>().ok())
            .collect::<Option<Vec<u32>>>()?;
        match n.as_slice() {
            &[t, c, p, r, ref rest @ ..]
                if [128, 256].contains(&t)
                    && [1, 2, 4].contains(&c)
                    && [4, 8].contains(&p)
                    && [4, 8, 16, 32].contains(&r)
                    && (t * c / 4) % p == 0
                    && rest.len() <= 1
                    && rest.iter().all(|&s| s > 0) =>
            {
                Some(BlurBand {
                    threads: t,
                    channels: c,
                    pixels: p,
                    rows: r,
                    strip: rest.first().copied().unwrap_or(256),
                })
            }
            _ => None,
        }
    }

    /// Work-items a group.
    ///
    /// ```
    /// assert_eq!(clpix::tuning::BlurBand::parse("256,1,4,8").unwrap().threads(), 256);
    /// ```
    pub fn threads(&self) -> u32 {
        self.threads
    }

    /// Channels a work-item of the vertical step.
    ///
    /// ```
    /// assert_eq!(clpix::tuning::BlurBand::parse("256,1,4,8").unwrap().channels(), 1);
    /// ```
    pub fn channels(&self) -> u32 {
        self.channels
    }

    /// Pixels a work-item of the horizontal step.
    ///
    /// ```
    /// assert_eq!(clpix::tuning::BlurBand::parse("256,1,4,8").unwrap().pixels(), 4);
    /// ```
    pub fn pixels(&self) -> u32 {
        self.pixels
    }

    /// Input rows a step.
    ///
    /// ```
    /// assert_eq!(clpix::tuning::BlurBand::parse("256,1,4,8").unwrap().rows(), 8);
    /// ```
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// Input rows a strip aims at.
    ///
    /// ```
    /// assert_eq!(clpix::tuning::BlurBand::parse("256,1,4,8,64").unwrap().strip(), 64);
    /// ```
    pub fn strip(&self) -> u32 {
        self.strip
    }
}
