"""Who is calling: the HTTP front as an OAuth 2.1 resource server (issue 27).

- :mod:`.principal`: :class:`~.principal.Principal`, the caller a verified access token names,
  as the call pipeline sees it (policy, budgets and the journal per principal).

The JOSE library and the token verification are an extra (``mcp-guard[auth]``), imported when the
HTTP front is given an issuer, never by ``wrap`` on stdio. The submodules are imported by name;
this package loads nothing by itself.
"""
