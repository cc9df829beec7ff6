/* blur: filled in by its issue. */
