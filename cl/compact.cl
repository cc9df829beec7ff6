/* compact: filled in by its issue. */
