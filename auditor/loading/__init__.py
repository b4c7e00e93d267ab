"""Loading splits into polars (AuditData), opening inputs safely, tokenizers, the demo data."""
