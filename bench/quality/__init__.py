"""Recall-quality benchmark: ``python -m bench.quality`` (issue 11, item 6).

Feeds hand-written multi-session conversations (``data/*.json``, format in
``FORMAT.md``) turn by turn into a fresh ``Memory`` with the offline mock
provider, then asks each conversation's labelled questions and measures:

- ``search()``: R@5, R@10 and MRR of the turns that answer a question, next to
  a plain BM25 over the raw turns of the same conversation (``bm25s``);
- ``recall()``: the share of answerable questions whose text contains a gold
  answer, and the share of abstention questions it answers with nothing;
- latency of ``remember``, ``search`` and ``recall``.
"""
