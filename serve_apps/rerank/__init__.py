"""docray Serve stage: rerank."""
