"""Chat with memory: facts from earlier turns come back, even after a restart.

Runs offline on the deterministic mock provider (pass ``--provider openai``
with ``OPENAI_API_KEY`` set to use a real model)::

    python examples/chat.py                       # type messages; "quit", Ctrl-D or Ctrl-C ends
    echo "I work at Acme." | python examples/chat.py
    echo "Where do I work?" | python examples/chat.py
    # agent: You work at Acme.

Each run continues the memory in ``--dir`` (default ``.memgraph-chat``) for the
scope ``--scope``. Facts are extracted every few turns, and when the
conversation ends (however it ends) the rest is extracted too.
"""

from __future__ import annotations

import argparse
import sys

from memgraph import Thread, llm, memory, set_memory_id

QUIT = frozenset({"quit", "exit", "bye", "/quit", "/exit"})
"""Messages that end the conversation instead of going to the model."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=".memgraph-chat", help="memory directory")
    parser.add_argument("--scope", default="me", help="whose memory")
    parser.add_argument("--provider", default="mock", help="provider spec, e.g. openai:gpt-4o-mini")
    args = parser.parse_args(argv)

    set_memory_id(args.scope)
    with memory(dir=args.dir, provider=args.provider, approve=True), Thread() as thread:
        thread.add_system("You are a helpful assistant with a long-term memory.")
        try:
            converse(thread, interactive=sys.stdin.isatty())
        except KeyboardInterrupt:  # Ctrl-C ends the conversation like "quit"
            print()
    # Leaving the ``with Thread()`` block extracted what the conversation had not stored yet.


def converse(thread: Thread, *, interactive: bool) -> None:
    """Read messages and print the replies until "quit", an empty input stream or Ctrl-D."""
    while True:
        try:
            message = input("you: " if interactive else "")
        except EOFError:
            if interactive:
                print()  # end the prompt's line
            return
        if message.strip().lower() in QUIT:
            return
        if message.strip():
            reply = llm(message, memory=True, thread=thread)
            print(f"agent: {reply}", flush=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # a second Ctrl-C while the last messages are being stored
        sys.exit(130)
