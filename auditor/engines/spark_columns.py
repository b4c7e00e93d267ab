"""Spark column helpers shared by the Spark engine's modules: user column names taken
literally, ``mapInArrow`` under any column names, and collecting a small result as polars."""
from __future__ import annotations

from functools import reduce
from typing import Any, Iterable

import polars as pl


def col(name: str) -> Any:
    """The user column ``name`` taken literally: backquoted, a backtick in it doubled. Spark
    reads a bare ``F.col("a.b")`` / ``df["a.b"]`` / ``df.select("a.b")`` as the struct field
    ``b`` of ``a`` and stops at a lone backtick; every Spark module resolves user column names
    through this helper (internal helper columns it names itself need not)."""
    from pyspark.sql import functions as F

    return F.col(quoted(name))


def is_float(df: Any, name: str) -> bool:
    from pyspark.sql.types import DoubleType, FloatType

    return isinstance(df.schema[name].dataType, (DoubleType, FloatType))


def missing(df: Any, name: str) -> Any:
    """Null, or NaN in a float column."""
    from pyspark.sql import functions as F

    c = col(name)
    return (c.isNull() | F.isnan(c)) if is_float(df, name) else c.isNull()


def plain(df: Any, name: str) -> Any:
    """The column with NaN as null (floats)."""
    from pyspark.sql import functions as F

    c = col(name)
    return F.when(~F.isnan(c), c) if is_float(df, name) else c


def unioned(parts: Iterable[Any]) -> Any:
    """The DataFrames stacked by column name, in order (``unionByName``)."""
    return reduce(lambda a, b: a.unionByName(b), parts)


def map_in_arrow(df: Any, func: Any, schema: Any) -> Any:
    """``df.mapInArrow(func, schema)`` for any input column names: pyspark's ``mapInArrow``
    resolves its input columns by name (``df[name]``), which parses dots and backticks. The
    input goes in under positional names (``toDF`` renames literally) and ``func`` sees every
    Arrow batch under the original names again."""
    names = list(df.columns)

    def renamed(batches: Any) -> Any:
        import pyarrow as pa

        return func(pa.RecordBatch.from_arrays(b.columns, names=names) for b in batches)

    return df.toDF(*[f"_in{i}" for i in range(len(names))]).mapInArrow(renamed, schema)


def quoted(name: str) -> str:
    """``name`` as a SQL identifier: in backticks, a backtick in it doubled (for SQL strings
    such as ``F.expr``)."""
    return "`" + name.replace("`", "``") + "`"


def to_polars(df: Any) -> pl.DataFrame:
    """Collect a (small) Spark DataFrame to the driver as polars, through Arrow."""
    try:
        got = pl.from_arrow(df.toArrow())  # pyspark >= 4.0
        assert isinstance(got, pl.DataFrame)  # a table gives a frame
        return got
    except AttributeError:  # pyspark 3.5
        return pl.from_pandas(df.toPandas())


def empty_polars(df: Any) -> pl.DataFrame:
    """``df``'s columns with no rows, typed as :func:`to_polars` (``toArrow``: timestamps in
    UTC) would type them, without a job."""
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        schema = to_arrow_schema(df.schema, timezone="UTC")
    except TypeError:  # pyspark before 4.2: no ``timezone`` (timestamps are UTC there)
        schema = to_arrow_schema(df.schema)
    got = pl.from_arrow(schema.empty_table())
    assert isinstance(got, pl.DataFrame)
    return got
