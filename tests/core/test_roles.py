"""The engine-free data model: the rule that casts a column to one type across splits."""
from __future__ import annotations


def test_common_type_is_the_rule_both_loaders_cast_by():
    from auditor.core.roles import ColumnType as T, common_type

    assert common_type([T.INTEGER, T.INTEGER]) == T.INTEGER
    assert common_type([T.INTEGER, T.BOOLEAN]) == T.INTEGER
    assert common_type([T.INTEGER, T.FLOAT]) == T.FLOAT
    assert common_type([T.DECIMAL, T.INTEGER]) == T.FLOAT
    assert common_type([T.BOOLEAN, T.BOOLEAN, T.NULL]) == T.BOOLEAN
    assert common_type([T.NULL, T.NULL]) == T.NULL
    assert common_type([T.NULL, T.STRING]) == T.STRING
    assert common_type([T.DATE, T.DATETIME]) == T.DATETIME
    assert common_type([T.DATETIME, T.DATETIME_TZ, T.DATE]) == T.DATETIME_TZ
    assert common_type([T.STRING, T.INTEGER]) is None
    assert common_type([T.BOOLEAN, T.STRING]) is None
    assert common_type([T.NESTED, T.NESTED]) is None
    assert common_type([T.DATE, T.FLOAT]) is None
