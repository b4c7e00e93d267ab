"""Data where it already lives: Hugging Face datasets (hf) and Great Expectations suites (gx)."""
