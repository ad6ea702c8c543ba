"""docray Serve stage: ingress."""
