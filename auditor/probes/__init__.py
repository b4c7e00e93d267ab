"""The tiny models behind the separability checks: feature matrices, the torch probe."""
