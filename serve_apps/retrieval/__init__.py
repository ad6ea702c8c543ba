"""The three candidate generators as Serve stages: GraphWalk, DenseSearch, PageRetrieval."""
