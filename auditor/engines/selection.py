"""Which engine measures a run's data: chosen here and nowhere else."""
from __future__ import annotations

from typing import Any

from auditor.core.roles import LoadedData
from auditor.engines.operations import Operations


def engine_of(data: LoadedData) -> Operations:
    """The engine that measures ``data``: the Spark engine's own (``data.engine``), or one
    polars engine over the loaded frames, made once per run (kept in ``data``'s cache). The
    only place the engine is chosen."""
    engine: Operations | None = getattr(data, "engine", None)
    if engine is not None:
        return engine
    from auditor.engines.polars_engine import PolarsEngine

    splits: Any = getattr(data, "splits")
    polars_data: Any = data
    made: Operations = data.cached(("engine",), lambda: PolarsEngine(
        splits, seed=getattr(data, "seed", 0), reference=getattr(data, "reference", None),
        data=polars_data))
    return made
