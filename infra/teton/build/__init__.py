"""One build: plan -> render every target -> validate -> atomic write with a manifest (filled in by the refactor)."""
