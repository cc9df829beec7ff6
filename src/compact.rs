//! compact: see its issue. Filled in by the compact work.
