"""Judging: how measured statistics become a grade, a sentence and evidence (shared by engines)."""
