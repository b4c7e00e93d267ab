"""Sign-off workflows: waivers, provenance, verify, baselines, the run ledger."""
