"""docray Serve stage: documents."""
