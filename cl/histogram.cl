/* histogram: filled in by its issue. */
