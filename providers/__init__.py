"""Built-in providers: an OpenAI-compatible one and a deterministic offline mock."""
