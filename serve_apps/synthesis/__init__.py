"""docray Serve stage: synthesis."""
