//! histogram: see its issue. Filled in by the histogram work.
