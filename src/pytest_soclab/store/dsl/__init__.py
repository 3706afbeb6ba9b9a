"""Query DSL over the embedded store: queries to SQL, aggregations, search responses."""
