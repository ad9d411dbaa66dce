"""Evaluation text, offline: the English Wikipedia sample inside the gensim wheel.

The file is gensim's test data ``enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2``
(a 2016 dump, ~100 articles after redirects are dropped). It is read with ``bz2`` + ``xml`` from
the installed package's directory; gensim itself is never imported.

Cleaning (``clean_wikitext``) is deliberately small; it keeps running prose and drops the rest:

1. drop comments, ``<ref>`` footnotes, ``<math>``/``<gallery>``-style blocks and other HTML tags;
2. drop templates ``{{...}}`` and tables ``{|...|}``, innermost first (they nest);
3. links: ``[[target|label]]`` -> label, ``[[target]]`` -> target; File/Image/Category and
   interlanguage links are dropped; ``[http://x label]`` -> label;
4. drop bold/italic quote marks and unescape HTML entities;
5. keep only paragraph lines (not headings, lists, tables, indents) with at least 8 words.

The cleaned articles are cached as one text file under multihead's cache directory
(``multihead.paths.cache_dir``) because cleaning takes a few seconds.

    ids = eval_windows(tokenizer, n_windows=8, window_tokens=256)   # LongTensor [8, 256]
    sents = sentences(200, seed=0)                                   # list[str]
"""
from __future__ import annotations

import bz2
import functools
import hashlib
import html
import importlib.util
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import torch

from multihead.hf.errors import INSTALL_HINT, MissingModelError
from multihead.paths import atomic_build, cache_dir

WIKI_FILE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
CLEANER_VERSION = 1          # bump when clean_wikitext changes, so the cache is rebuilt
MIN_PARAGRAPH_WORDS = 8
ARTICLE_SEPARATOR = "\n\n"


def wiki_path() -> Path:
    """Path of the Wikipedia sample inside the installed gensim package (found without importing it)."""
    spec = importlib.util.find_spec("gensim")
    if spec is None or not spec.submodule_search_locations:
        raise MissingModelError(f"gensim (which carries the Wikipedia sample) is not installed; {INSTALL_HINT}")
    path = Path(list(spec.submodule_search_locations)[0]) / "test" / "test_data" / WIKI_FILE
    if not path.is_file():
        raise MissingModelError(f"{path} is missing (expected gensim==4.4.0); {INSTALL_HINT}")
    return path


# ----------------------------------------------------------------------------- cleaning

_DROP_BLOCKS = re.compile(
    r"<!--.*?-->"                                           # comments
    r"|<ref[^>/]*/>"                                        # <ref name=x/>
    r"|<(ref|math|gallery|timeline|score|syntaxhighlight|source|pre|nowiki)\b[^>]*>.*?</\1\s*>",
    re.S | re.I)
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")                   # innermost {{...}}
_TABLE = re.compile(r"\{\|(?:(?!\{\|).)*?\|\}", re.S)      # innermost {| ... |}
_LINK = re.compile(r"\[\[([^\[\]]*)\]\]")                   # innermost [[...]]
_EXT_LINK = re.compile(r"\[(?:https?:|ftp:)?//[^\s\]]+\s*([^\]]*)\]")
_DROP_LINK_PREFIX = re.compile(r"^\s*(file|image|category|media|wikipedia|wp|[a-z]{2,3}(-[a-z]+)?):", re.I)
_QUOTES = re.compile(r"'{2,}")
_SPACES = re.compile(r"[ \t\u00a0]+")


def _sub_until_stable(pattern: re.Pattern, repl, text: str) -> str:
    """Apply ``pattern.sub`` until nothing changes: peels nested constructs from the inside out."""
    while True:
        new = pattern.sub(repl, text)
        if new == text:
            return text
        text = new


def _link_text(match: re.Match) -> str:
    inner = match.group(1)
    if _DROP_LINK_PREFIX.match(inner):
        return ""
    return inner.split("|")[-1]


def clean_wikitext(text: str) -> str:
    """Wiki markup -> plain prose paragraphs separated by newlines (rules in the module docstring)."""
    text = html.unescape(text)                             # the dump escapes <ref> as &lt;ref&gt; once more
    text = _DROP_BLOCKS.sub("", text)
    text = _sub_until_stable(_TEMPLATE, "", text)
    text = _sub_until_stable(_TABLE, "", text)
    text = _sub_until_stable(_LINK, _link_text, text)
    text = _EXT_LINK.sub(r"\1", text)
    text = _TAG.sub("", text)
    text = _QUOTES.sub("", text)
    text = html.unescape(text)
    keep = []
    for line in text.split("\n"):
        line = _SPACES.sub(" ", line).strip()
        if not line or line[0] in "=*#:;|!{}[" or line.startswith("__"):
            continue                                       # heading, list, indent, table residue
        line = re.sub(r"\(\s*[,;]?\s*\)", "", line)        # "( )" left where templates were
        line = re.sub(r" +([,.;:])", r"\1", line)
        if len(line.split()) >= MIN_PARAGRAPH_WORDS:
            keep.append(line)
    return "\n".join(keep)


# ----------------------------------------------------------------------------- the corpus

def _read_articles(path: Path) -> list[tuple[str, str]]:
    """(title, cleaned text) for every main-namespace, non-redirect page, in file order."""
    out = []
    with bz2.open(path, "rb") as fh:
        title = ns = None
        redirect = False
        for _, elem in ET.iterparse(fh, events=("end",)):
            tag = elem.tag.rsplit("}", 1)[-1]
            if tag == "title":
                title = elem.text or ""
            elif tag == "ns":
                ns = elem.text
            elif tag == "redirect":
                redirect = True
            elif tag == "text" and ns == "0" and not redirect:
                body = clean_wikitext(elem.text or "")
                if body:
                    out.append((title, body))
            elif tag == "page":
                title, ns, redirect = None, None, False
                elem.clear()                               # keep memory flat
    return out


def _cache_file() -> Path:
    return cache_dir(f"enwiki-sample-clean-v{CLEANER_VERSION}.txt")


@functools.lru_cache(maxsize=1)
def articles() -> tuple[tuple[str, str], ...]:
    """The cleaned Wikipedia sample as ``((title, text), ...)``; paragraphs in ``text`` are newline-separated.

    Cached on disk: one article per record, title line then text, records split by a form feed.
    """
    cache = _cache_file()
    if cache.is_file():
        records = cache.read_text(encoding="utf-8").split("\f")
        return tuple(tuple(r.split("\n", 1)) for r in records if r)  # type: ignore[misc]
    arts = _read_articles(wiki_path())
    with atomic_build(cache) as tmp:                       # parallel readers never see half a file
        tmp.write_text("\f".join(f"{t}\n{b}" for t, b in arts), encoding="utf-8")
    return tuple(arts)


def corpus_text() -> str:
    """All cleaned articles joined by a blank line."""
    return ARTICLE_SEPARATOR.join(body for _, body in articles())


# ----------------------------------------------------------------------------- token windows

_TOKEN_CACHE: dict[str, torch.Tensor] = {}


def corpus_tokens(tokenizer) -> torch.Tensor:
    """The whole cleaned corpus as one LongTensor [N_tokens], no special tokens.

    Articles are tokenized as a batch (one 2.5 MB string is several times slower) and joined
    by the tokens of the blank-line separator. Memoized in memory and on disk (an int32 .npy
    under the cache directory keyed by the tokenizer's identity and the cleaner version).
    """
    ident = f"{getattr(tokenizer, 'name_or_path', '')}|{len(tokenizer)}|{type(tokenizer).__name__}|v{CLEANER_VERSION}"
    key = hashlib.sha1(ident.encode(), usedforsecurity=False).hexdigest()[:16]    # a cache key, not a secret
    if key in _TOKEN_CACHE:
        return _TOKEN_CACHE[key]
    path = _cache_file().with_name(f"enwiki-tokens-{key}.npy")
    if path.is_file():
        ids = np.load(path)
    else:
        sep = tokenizer(ARTICLE_SEPARATOR, add_special_tokens=False)["input_ids"]
        pieces = tokenizer([b for _, b in articles()], add_special_tokens=False)["input_ids"]
        joined: list[int] = []
        for i, p in enumerate(pieces):
            joined.extend(sep if i else [])
            joined.extend(p)
        ids = np.asarray(joined, dtype=np.int32)
        with atomic_build(path) as tmp:
            with open(tmp, "wb") as fh:                    # np.save(path) would append ".npy" to a name
                np.save(fh, ids)
    _TOKEN_CACHE[key] = torch.from_numpy(ids.astype(np.int64))
    return _TOKEN_CACHE[key]


def windows_available(tokenizer, window_tokens: int) -> int:
    """How many non-overlapping windows of ``window_tokens`` tokens the corpus holds (``eval_windows``'s bound)."""
    if window_tokens < 2:
        raise ValueError(f"window_tokens: expected >= 2, got {window_tokens}")
    return corpus_tokens(tokenizer).numel() // window_tokens


def eval_windows(tokenizer, n_windows: int, window_tokens: int, seed: int = 0) -> torch.LongTensor:
    """``n_windows`` non-overlapping windows of ``window_tokens`` tokens from the corpus: LongTensor [N, T].

    The token stream is cut into consecutive windows; a seeded permutation picks which ones
    (same tokenizer + seed -> the same windows on every machine). Windows carry no BOS; the
    perplexity of a window counts its T-1 next-token predictions.
    """
    if n_windows < 1:
        raise ValueError(f"n_windows: expected >= 1, got {n_windows}")
    tokens = corpus_tokens(tokenizer)
    available = windows_available(tokenizer, window_tokens)
    if n_windows > available:
        raise ValueError(f"n_windows: the corpus holds {available} windows of {window_tokens} tokens, got {n_windows}")
    chunks = tokens[: available * window_tokens].view(available, window_tokens)   # (available, T)
    pick = np.random.default_rng(seed).permutation(available)[:n_windows]
    return chunks[torch.from_numpy(pick)].clone()                                  # (N, T)


# ----------------------------------------------------------------------------- sentences

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


@functools.lru_cache(maxsize=1)
def _all_sentences() -> tuple[tuple[str, int], ...]:
    """Every (sentence, article index) in the corpus, deduplicated, in corpus order."""
    seen, out = set(), []
    for i, (_, body) in enumerate(articles()):
        for para in body.split("\n"):
            for s in _SENTENCE_END.split(para):
                s = s.strip()
                if s and s not in seen and s[-1] in ".!?":
                    seen.add(s)
                    out.append((s, i))
    return tuple(out)


def sentences(n: int, seed: int = 0, min_words: int = 8, max_words: int = 60,
              with_article: bool = False):
    """``n`` distinct clean sentences of ``min_words``..``max_words`` words, chosen with a fixed seed.

    Returns ``list[str]``; with ``with_article=True``, ``list[(sentence, article_index)]`` so
    that retrieval experiments can use "same article" as a relevance signal.
    """
    pool = [(s, a) for s, a in _all_sentences() if min_words <= len(s.split()) <= max_words]
    if n > len(pool):
        raise ValueError(f"n: only {len(pool)} sentences have {min_words}..{max_words} words, got {n}")
    pick = np.random.default_rng(seed).permutation(len(pool))[:n]
    chosen = [pool[i] for i in pick]
    return chosen if with_article else [s for s, _ in chosen]
