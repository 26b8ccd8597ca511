"""memgraph behind the interfaces agent frameworks define for memory.

* :mod:`memgraph.integrations.langgraph`: ``MemgraphStore``, a LangGraph
  ``BaseStore`` (extra ``[langgraph]``);
* :mod:`memgraph.integrations.openai_agents`: ``MemgraphSession``, an OpenAI
  Agents SDK ``Session``, and ``memory_tools`` (extra ``[openai-agents]``).

Each imports its framework, so ``import memgraph`` never does; importing one
without its framework raises an ``ImportError`` naming the extra to install.
"""
