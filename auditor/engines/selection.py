"""Which engine measures a run's data: chosen here and nowhere else."""
from __future__ import annotations

from typing import Any


def engine_of(data: Any) -> Any:
    """The engine that measures ``data``: the Spark engine's own (``data.engine``), or one
    polars engine over the loaded frames, made once per run (kept in ``data``'s cache). The
    only place the engine is chosen."""
    engine = getattr(data, "engine", None)
    if engine is not None:
        return engine
    from auditor.engines.polars_engine import PolarsEngine

    return data.cached(("engine",), lambda: PolarsEngine(data.splits, seed=data.seed,
                                                           reference=data.reference))
