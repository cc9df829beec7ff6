//! blur: see its issue. Filled in by the blur work.
