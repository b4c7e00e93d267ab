"""The input checks both loaders run on declared columns (core.splits), and that the polars and
Spark loaders both go through them."""
from __future__ import annotations

import polars as pl
import pytest

from auditor.core.config import Chat, Columns, Tokens
from auditor.core.splits import TokenType, check_declared_columns, check_token_types
from auditor.errors import InputError
from auditor.loading.data import build_audit_data, token_type

COLS = Columns(label="y", ids=["rid"], exclude=["gone"])


def test_a_missing_role_column_names_the_file_the_role_and_the_closest_name():
    with pytest.raises(InputError) as err:
        check_declared_columns({"train": ["rid", "y", "x"], "test": ["rid", "label", "x"]},
                               COLS, None, {"train": "tr.csv", "test": "te.csv"})
    assert str(err.value) == ("te.csv: label column 'y' not found; columns are 'rid', 'label', "
                              "'x'")
    with pytest.raises(InputError, match=r"split 'test': id column 'rid' not found \(did you "
                                         r"mean 'ridd'\?\)"):
        check_declared_columns({"test": ["ridd", "y"]}, COLS, None, {})


def test_excluded_columns_may_be_absent_and_a_repeated_name_is_an_error():
    check_declared_columns({"train": ["rid", "y"]}, COLS, None, {})  # "gone" is only excluded
    with pytest.raises(InputError, match="^tr.csv: duplicate column name 'x'$"):
        check_declared_columns({"train": ["rid", "x", "y", "x"]}, COLS, None,
                               {"train": "tr.csv"})
    check_declared_columns({"train": ["rid", "x", "y", "X"]}, COLS, None, {})  # polars
    with pytest.raises(InputError, match="^split 'train': column names 'x' and 'X' differ only "
                                         "in case"):
        check_declared_columns({"train": ["rid", "x", "y", "X"]}, COLS, None, {},
                               fold_case=True)


def test_token_columns_are_required_with_their_role_and_a_text_only_hint():
    tokens = Tokens(tokenizer="t.json", text="doc", input_ids="ids",
                    chat=Chat(messages="msgs"))
    with pytest.raises(InputError, match=r"tokens.input_ids column 'ids' not found \(a corpus "
                                         r"stored as text only"):
        check_declared_columns({"train": ["doc", "msgs"]}, Columns(), tokens, {})
    with pytest.raises(InputError, match="tokens.chat.messages column 'msgs' not found"):
        check_declared_columns({"train": ["doc", "ids"]}, Columns(), tokens, {})


@pytest.mark.parametrize("dtype,expected", [
    (pl.List(pl.Int32), TokenType.NUMBERS), (pl.Array(pl.UInt16, 4), TokenType.NUMBERS),
    (pl.List(pl.Boolean), TokenType.NUMBERS), (pl.Null, TokenType.NULL),
    (pl.List(pl.Struct({"role": pl.String, "content": pl.String})), TokenType.MESSAGES),
    (pl.List(pl.Struct({"role": pl.String})), TokenType.OTHER),
    (pl.String, TokenType.TEXT), (pl.List(pl.String), TokenType.OTHER)])
def test_polars_types_as_the_token_checks_see_them(dtype, expected):
    assert token_type(dtype) == expected


def test_a_token_column_of_text_is_named_with_its_type_and_a_hint():
    tokens = Tokens(tokenizer="t.json", input_ids="ids", labels="lab")
    ok = {"ids": (TokenType.NUMBERS, "list[i32]"), "lab": (TokenType.NULL, "null")}
    check_token_types({"train": ok}, tokens, {})
    with pytest.raises(InputError) as err:
        check_token_types({"train": ok, "test": ok | {"lab": (TokenType.TEXT, "str")}},
                          tokens, {"test": "te.csv"})
    assert str(err.value) == ("te.csv: tokens.labels column 'lab' has type str; expected a list "
                              "of label token ids (list<int>) (text cannot hold lists: store "
                              "them as Parquet or JSON Lines lists)")


def test_the_polars_loader_runs_both_checks():
    frame = pl.DataFrame({"rid": [1, 2], "y": [0, 1], "ids": ["a b", "c"]})
    with pytest.raises(InputError, match="split 'train': label column 'yy' not found"):
        build_audit_data({"train": frame}, columns=Columns(label="yy"))
    with pytest.raises(InputError, match="tokens.input_ids column 'ids' has type String"):
        build_audit_data({"train": frame}, columns=Columns(label="y"),
                         tokens=Tokens(tokenizer="t.json", input_ids="ids"))
