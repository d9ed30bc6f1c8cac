"""Reports built from results records: the matrix of checks x targets."""
