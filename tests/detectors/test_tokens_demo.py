"""The tokenized demo (auditor/loading/demo_tokens.py): deterministic, and every planted problem is
found by its tokens.* check with the planted count."""
from __future__ import annotations

import pytest

pytest.importorskip("tokenizers")

from auditor.core.config import load_config  # noqa: E402
from auditor.loading.data import open_splits  # noqa: E402
from auditor.loading.demo_tokens import PLANTED, make_token_demo, write_token_demo  # noqa: E402
from auditor.detectors.token_contamination import Contamination  # noqa: E402
from auditor.detectors.token_roundtrip import RoundTrip  # noqa: E402
from auditor.detectors.token_lengths import SequenceLengths
from auditor.detectors.tokens import SpecialTokens  # noqa: E402


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = write_token_demo(tmp_path_factory.mktemp("tokdemo"))
    return path, open_splits(load_config(path))


def test_the_demo_tokenizer_and_data_are_deterministic():
    (a, tok_a), (b, tok_b) = make_token_demo(), make_token_demo()
    assert tok_a.to_str() == tok_b.to_str()
    assert all(a[k].equals(b[k]) for k in a)


def test_every_planted_token_problem_is_found_with_its_count(demo):
    _, data = demo
    special = {f.metric: f for f in SpecialTokens().run(data)}
    assert (special["label_shift"].subject, special["label_shift"].count) == (
        "labels", PLANTED["double_shift"])
    assert (special["attention_mask_vs_padding"].subject,
            special["attention_mask_vs_padding"].count) == (
        "attention_mask", PLANTED["mask_covers_padding"])
    assert special["special_token_injection"].count == PLANTED["injection"]
    assert set(special) == {"token_layout", "label_shift", "attention_mask_vs_padding",
                            "special_token_injection"}
    rt = {f.metric: f for f in RoundTrip().run(data)}
    assert rt["stale_tokenization"].count == PLANTED["stale"]
    assert rt["roundtrip_loss"].count == 0
    (cont,) = Contamination().run(data)
    assert cont.count == PLANTED["copied_exact"] + PLANTED["copied_near"]
    by = {r["detector"]: r["documents"] for r in cont.evidence["by_detector"]}
    assert by["exact copies (normalised text)"] == PLANTED["copied_exact"]
    lengths = {f.metric: f for f in SequenceLengths().run(data)}
    assert lengths["eos_cut"].count > 0 and lengths["length_psi"].severity == "info"
