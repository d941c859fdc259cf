"""The call pipeline: how a ``tools/call`` is judged, and what a refused one looks like.

- :mod:`.pipeline`: the one ordered list of steps of a call (visibility, size, schema, pinning,
  new tools, budget, journal) for both commands; :mod:`.call`: the values it passes along and
  hands back (:class:`~.call.Route`, :class:`~.call.Call`, :class:`~.call.Rejection`);
  :mod:`.recording`: the records it makes of each call (the journal's intent and outcome, the
  observer told, the trace closed).
- :mod:`.policy` (access, limits, budget), :mod:`.pinning` (the lock file), :mod:`.journal`
  (durable JSONL) and :mod:`.jcs` (RFC 8785, for their digests): what the steps consult.
- :mod:`.tool_table`: the listed tools with their verdicts and compiled checks (the schema step
  judges by it; ``wrap`` annotates its listings with it).
- :mod:`.refusals`: the one rejection builder, the schema verdict and the unknown-tool answer;
  :mod:`.outputs`: the check of a result against the tool's ``outputSchema``.
- :mod:`.observer` and :mod:`.metrics`: what the pipeline tells about its outcomes.
- :mod:`.stores`: the ports to shared state (a budget across replicas, a journal in a database),
  filled by :mod:`mcp_guard.state`.

Above the core, the wire vocabulary and the reports' status rule; below both sessions
(:mod:`mcp_guard.sessions`), which run a pipeline per session. The submodules are imported by
name; this package loads nothing by itself (``tests/test_layering.py``).
"""
