"""Who is calling: the HTTP front as an OAuth 2.1 resource server (issue 27).

- :mod:`.principal`: :class:`~.principal.Principal`, the caller a verified access token names,
  as the call pipeline sees it (policy, budgets and the journal per principal), and
  :class:`~.principal.Callers`, how a session asks the front who sent a request.
- :mod:`.verdicts`: :class:`~.verdicts.Refusal` (status, RFC 6750 error, the failed check) and the
  claims read into a principal (pure).
- :mod:`.verifier`: :class:`~.verifier.TokenVerifier`, bearer tokens checked (JWT with joserfc,
  else introspection); :mod:`.keys` (the JWKS), :mod:`.introspection` (RFC 7662) and
  :mod:`.documents` (metadata discovery, bounded fetches) serve it.

The JOSE library and the token verification are an extra (``mcp-guard[auth]``), imported when the
HTTP front is given an issuer, never by ``wrap`` on stdio. The submodules are imported by name;
this package loads nothing by itself.
"""
