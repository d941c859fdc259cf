"""The call pipeline's shared parts: what a refused ``tools/call`` looks like, and the schema step.

:mod:`.refusals` holds the one rejection builder, the schema verdict and the unknown-tool answer
that ``wrap`` (:mod:`mcp_guard.calls.tool_table`) and ``serve`` (:mod:`mcp_guard.calls.pipeline`)
both use. Above the core and the wire vocabulary; below both sessions.
"""
