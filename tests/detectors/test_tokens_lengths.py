"""tokens.lengths: truncation, EOS cut by truncation, length PSI and token-frequency drift,
each number compared with a direct computation on real GPT-2 / SentencePiece tokenizations."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from auditor.detectors.token_lengths import SequenceLengths
from auditor.errors import NotApplicable
from auditor.report.results import Severity
from auditor.loading.tokenizers import load_tokenizer
from auditor.core.config import Columns
from auditor.loading.data import build_audit_data
from tests.tokenizer_fixtures import (gpt2_json, lee_test, lee_train, sp_model,  # noqa: F401
                                      token_data, tokenized_frame)

EOT = 50256


@pytest.fixture(scope="module")
def gpt2(gpt2_json):
    return load_tokenizer(str(gpt2_json))


def _by_metric(findings):
    return {f.metric: f for f in findings}


def test_truncation_and_eos_cut_equal_a_direct_count(gpt2, gpt2_json, lee_train):
    frames = {"train": tokenized_frame(gpt2, lee_train[:60], eos=EOT, pad=EOT, max_length=256),
              "test": tokenized_frame(gpt2, lee_train[60:90], eos=EOT, pad=EOT,
                                      max_length=256)}
    f = _by_metric(SequenceLengths().run(token_data(frames, gpt2_json, pad_id=EOT,
                                                    max_length=256)))
    raw = {k: gpt2.encode_batch(v["text"].to_list()) for k, v in frames.items()}
    cut = {k: sum(len(r) + 1 >= 256 for r in v) for k, v in raw.items()}  # +1: the EOS
    assert f["truncated_rows"].count == sum(cut.values()) > 0
    assert f["truncated_rows"].severity == Severity.WARN
    assert f["truncated_rows"].splits == [k for k, v in cut.items() if v]
    # a row of exactly 255 tokens keeps its EOS at position 256: truncated but not cut
    lost = sum(len(r) >= 256 for v in raw.values() for r in v)
    assert f["eos_cut"].count == lost
    assert "lost their EOS (id 50256)" in f["eos_cut"].message


def test_length_distribution_chart_holds_shares_per_split(gpt2, gpt2_json, lee_train):
    frames = {"train": tokenized_frame(gpt2, lee_train[:60], eos=EOT, pad=EOT),
              "test": tokenized_frame(gpt2, lee_train[60:90], eos=EOT, pad=EOT)}
    f = _by_metric(SequenceLengths().run(token_data(frames, gpt2_json, pad_id=EOT)))[
        "length_distribution"]
    chart = f.evidence["chart"]
    assert chart["type"] == "hist" and set(chart["series"]) == {"train", "test"}
    assert len(chart["edges"]) == len(chart["series"]["train"]) + 1
    assert sum(chart["series"]["test"]) == pytest.approx(1.0, abs=1e-5)
    lengths = [sum(m) for m in frames["train"]["attention_mask"].to_list()]
    assert f.evidence["by_split"][0]["p50"] == int(np.percentile(lengths, 50))


def test_length_psi_and_token_js_equal_reference_computations(gpt2, gpt2_json, lee_train,
                                                             lee_test):
    frames = {"train": tokenized_frame(gpt2, lee_train[:200], eos=EOT, pad=EOT),
              "test": tokenized_frame(gpt2, lee_test[:50], eos=EOT, pad=EOT)}
    findings = _by_metric(SequenceLengths().run(token_data(frames, gpt2_json, pad_id=EOT)))
    la = np.array([sum(m) for m in frames["train"]["attention_mask"].to_list()])
    lb = np.array([sum(m) for m in frames["test"]["attention_mask"].to_list()])
    edges = np.concatenate([[-np.inf], np.unique(np.quantile(la, np.linspace(0, 1, 11)[1:-1])),
                            [np.inf]])
    e = np.maximum(np.histogram(la, edges)[0] / len(la), 1e-4)
    a = np.maximum(np.histogram(lb, edges)[0] / len(lb), 1e-4)
    psi = float(np.sum((a - e) * np.log(a / e)))
    f = findings["length_psi"]
    assert f.value == pytest.approx(psi, abs=1e-9)
    assert f.splits == ["train", "test"]
    ca, cb = np.zeros(50257), np.zeros(50257)
    for df, c in ((frames["train"], ca), (frames["test"], cb)):
        for ids, m in zip(df["input_ids"].to_list(), df["attention_mask"].to_list()):
            np.add.at(c, ids[:sum(m)], 1)
    js = findings["token_frequency_js"]
    assert js.value == pytest.approx(jensenshannon(ca, cb, base=2), abs=1e-9)
    assert js.severity == Severity.INFO
    top = js.evidence["tokens whose share moved most"]
    diffs = np.abs(cb / cb.sum() - ca / ca.sum())
    assert top[0]["id"] == int(np.argmax(diffs))


def test_a_large_length_shift_fails_and_a_small_sample_is_only_information(gpt2, gpt2_json,
                                                                          lee_train):
    short = [" ".join(t.split()[:40]) for t in lee_train[100:160]]
    frames = {"train": tokenized_frame(gpt2, lee_train[:100], eos=EOT, pad=EOT),
              "test": tokenized_frame(gpt2, short, eos=EOT, pad=EOT)}
    f = _by_metric(SequenceLengths().run(token_data(frames, gpt2_json, pad_id=EOT)))[
        "length_psi"]
    assert f.severity == Severity.FAIL and f.value > 0.25
    tiny = {"train": frames["train"], "test": tokenized_frame(gpt2, lee_train[100:103],
                                                              eos=EOT, pad=EOT)}
    g = _by_metric(SequenceLengths().run(token_data(tiny, gpt2_json, pad_id=EOT)))["length_psi"]
    assert g.value > 0.25 and g.severity == Severity.INFO
    assert "not significant at this sample size" in g.message


def test_one_split_gives_no_drift_findings(sp_model, lee_train):
    sp = load_tokenizer(str(sp_model))
    frames = {"train": tokenized_frame(sp, lee_train[:30], bos=1, eos=2)}
    metrics = [f.metric for f in SequenceLengths().run(token_data(frames, sp_model))]
    assert "length_psi" not in metrics and "length_distribution" in metrics


def test_without_a_tokens_section_the_check_is_not_applicable(clean_splits):
    data = build_audit_data(clean_splits, columns=Columns(label="y", ids=["row_id"]))
    with pytest.raises(NotApplicable, match="no tokens: section"):
        SequenceLengths().run(data)


@pytest.mark.parametrize("bad", [dict(bins=1), dict(truncation_warn_above=2.0),
                                 dict(psi_fail_above=-1.0), dict(alpha=1.5)])
def test_invalid_parameters_are_rejected(bad):
    with pytest.raises(ValueError, match="must be"):
        SequenceLengths(**bad)
