"""Per-check Spark implementations that predate the engine operations (being dissolved into
the operations of :mod:`auditor.engines`; a check moved to ``measure``/``judge`` loses its twin
here). Above the detectors: these modules import the detectors they duplicate."""
