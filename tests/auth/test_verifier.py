"""Bearer tokens checked by ``auth.verifier.TokenVerifier`` against a test authorization server on loopback.

The cases of issue 27 item 4: a valid token, expired, wrong audience, wrong issuer, a token for
another resource, an unknown ``kid`` then a key rotation (one bounded JWKS fetch), ``alg: none``,
HS256 "signed" with the issuer's public key, a missing scope, an opaque token introspected then
revoked, a 1 MiB token, malformed headers. Each refusal names its check, and never the token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from joserfc.jwk import ECKey

from mcp_guard.auth.principal import Principal
from mcp_guard.auth.verdicts import Refusal
from mcp_guard.auth.verifier import TokenVerifier
from mcp_guard.oauth_config import OAuthSettings
from tests.auth.issuer import INTROSPECTION_CLIENT, Issuer, running_issuer

pytestmark = pytest.mark.anyio

RESOURCE = "http://127.0.0.1:8931/mcp"


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


def settings(issuer: Issuer, **extra: Any) -> OAuthSettings:
    return OAuthSettings(issuer=issuer.url, resource=RESOURCE, scopes=("mcp:tools",), **extra)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forged(header: dict[str, Any], claims: dict[str, Any], secret: bytes | None) -> str:
    """A compact JWS made by hand: unsigned (``secret`` None) or HMAC-SHA256 with ``secret``."""
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
    if secret is None:
        return signing_input + "."
    return signing_input + "." + b64(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest())


def claims_for(issuer: Issuer) -> dict[str, Any]:
    return {"iss": issuer.url, "aud": RESOURCE, "sub": "mallory", "scope": "mcp:tools", "exp": int(time.time()) + 600}


async def verdict(issuer: Issuer, token: str, **extra: Any) -> Principal | Refusal:
    verifier = TokenVerifier(settings(issuer, **extra))
    try:
        return await verifier.verify_header(f"Bearer {token}")
    finally:
        await verifier.aclose()


def refused(result: Principal | Refusal, status: int, check: str, token: str) -> None:
    assert isinstance(result, Refusal), result
    assert (result.status, result.check) == (status, check)
    assert token not in result.description and token[-20:] not in result.description


async def test_a_valid_token_names_its_principal(issuer: Issuer) -> None:
    token = issuer.token(RESOURCE, groups=["support", 7], scope="mcp:tools extra")
    result = await verdict(issuer, token)
    assert result == Principal(
        subject="alice",
        issuer=issuer.url,
        client_id="agent",
        scopes=frozenset({"mcp:tools", "extra"}),
        groups=frozenset({"support"}),
    )


async def test_an_audience_list_holding_the_resource_passes_and_azp_names_the_client(issuer: Issuer) -> None:
    token = issuer.token(RESOURCE, aud=["https://other.example", RESOURCE], client_id=None, azp="web")
    result = await verdict(issuer, token)
    assert isinstance(result, Principal) and result.client_id == "web"


@pytest.mark.parametrize(
    ("claims", "check"),
    [
        ({"exp": int(time.time()) - 3600}, "expired"),
        ({"exp": None}, "expiry"),
        ({"aud": "https://other.example/mcp"}, "audience"),
        ({"aud": None}, "audience"),
        ({"iss": "https://evil.example"}, "issuer"),
        ({"nbf": int(time.time()) + 3600}, "not before"),
        ({"sub": None, "client_id": None}, "subject"),
    ],
    ids=["expired", "no-exp", "wrong-audience", "no-audience", "wrong-issuer", "not-yet-valid", "no-subject"],
)
async def test_a_claim_that_fails_is_refused_with_its_check(issuer: Issuer, claims: dict[str, Any], check: str) -> None:
    token = issuer.token(RESOURCE, **claims)
    refused(await verdict(issuer, token), 401, check, token)


async def test_a_token_for_another_resource_of_the_same_issuer_is_refused(issuer: Issuer) -> None:
    token = issuer.token("http://127.0.0.1:9999/mcp")  # another MCP server the user also uses
    refused(await verdict(issuer, token), 401, "audience", token)


async def test_the_leeway_covers_a_little_clock_skew(issuer: Issuer) -> None:
    token = issuer.token(RESOURCE, exp=int(time.time()) - 5, nbf=int(time.time()) + 5)
    assert isinstance(await verdict(issuer, token), Principal)
    refused(await verdict(issuer, token, leeway_seconds=0), 401, "expired", token)


async def test_a_missing_scope_is_a_403(issuer: Issuer) -> None:
    token = issuer.token(RESOURCE, scope="other")
    refused(await verdict(issuer, token), 403, "scope", token)
    result = await verdict(issuer, token)
    assert isinstance(result, Refusal) and result.error == "insufficient_scope"


async def test_alg_none_is_refused_before_any_key_is_looked_up(issuer: Issuer) -> None:
    token = forged({"alg": "none", "kid": issuer.keys[0].kid}, claims_for(issuer), None)
    refused(await verdict(issuer, token), 401, "algorithm", token)


async def test_hs256_signed_with_the_issuers_public_key_is_refused(issuer: Issuer) -> None:
    """Key confusion (RFC 8725 section 2.1): the public key, as PEM or as the JWK's JSON, used as an HMAC secret."""
    public = issuer.keys[0]
    for secret in (public.as_pem(private=False), json.dumps(public.as_dict(private=False)).encode()):
        token = forged({"alg": "HS256", "kid": public.kid}, claims_for(issuer), secret)
        refused(await verdict(issuer, token), 401, "algorithm", token)


async def test_a_signature_by_another_key_under_the_issuers_kid_is_refused(issuer: Issuer) -> None:
    stranger = ECKey.generate_key("P-256", auto_kid=True)
    token = issuer.token(RESOURCE, key=stranger)
    header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    assert header["kid"] != issuer.keys[0].kid
    # Put the issuer's kid on the stranger's token: the signature must not verify with the issuer's RSA key.
    swapped = b64(json.dumps({**header, "kid": issuer.keys[0].kid}).encode())
    tampered = ".".join([swapped, *token.split(".")[1:]])
    refused(await verdict(issuer, tampered), 401, "signature", tampered)
    body = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    altered = issuer.token(RESOURCE)
    parts = altered.split(".")
    parts[1] = b64(json.dumps({**body, "sub": "root"}).encode())  # claims changed after signing
    refused(await verdict(issuer, ".".join(parts)), 401, "signature", ".".join(parts))


async def test_unknown_kids_cost_at_most_one_jwks_fetch_per_interval(issuer: Issuer) -> None:
    verifier = TokenVerifier(settings(issuer, jwks_refresh_seconds=3600))
    try:
        assert isinstance(await verifier.verify(issuer.token(RESOURCE)), Principal)
        assert verifier.keys.fetches == 1
        for _ in range(5):  # a flood of made-up kids within the interval: refused, no fetch
            stranger = issuer.token(RESOURCE, key=ECKey.generate_key("P-256", auto_kid=True))
            refused(await verifier.verify(stranger), 401, "key id", stranger)
        assert verifier.keys.fetches == 1
    finally:
        await verifier.aclose()


async def test_an_unknown_kid_fetches_the_jwks_again_and_a_rotated_key_is_accepted(issuer: Issuer) -> None:
    old_keys = list(issuer.keys)
    verifier = TokenVerifier(settings(issuer, jwks_refresh_seconds=0))
    try:
        before = issuer.token(RESOURCE)
        assert isinstance(await verifier.verify(before), Principal)
        assert verifier.keys.fetches == 1
        generation = verifier.keys.generation
        new_key = ECKey.generate_key("P-256", auto_kid=True)
        issuer.keys[:] = [new_key]  # the issuer rotates: the new key replaces the old one
        rotated = issuer.token(RESOURCE, key=new_key)
        assert isinstance(await verifier.verify(rotated), Principal)
        assert verifier.keys.fetches == 2  # the unknown kid made the ring fetch the JWKS again
        assert verifier.keys.generation > generation  # the key set changed
        refused(await verifier.verify(before), 401, "key id", before)  # its cached verdict is forgotten
    finally:
        issuer.keys[:] = old_keys
        await verifier.aclose()


async def test_requests_that_arrive_while_the_first_jwks_fetch_is_in_flight_wait_for_it(issuer: Issuer) -> None:
    """Not 503 for every request of a burst but the first: they share its fetch (one discovery, one JWKS)."""
    verifier = TokenVerifier(settings(issuer))
    hits = dict(issuer.hits)
    results: list[Principal | Refusal] = []

    async def one(n: int) -> None:
        results.append(await verifier.verify(issuer.token(RESOURCE, jti=str(n))))

    issuer.jwks_gate.clear()  # the issuer holds its JWKS answer until the others have arrived
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, 0)
            with anyio.fail_after(10):
                while issuer.hits["/jwks"] == hits.get("/jwks", 0):  # the first fetch is under way
                    await anyio.sleep(0.01)
            for n in range(1, 8):
                tg.start_soon(one, n)
            for _ in range(100):
                await anyio.sleep(0)
            issuer.jwks_gate.set()
    finally:
        issuer.jwks_gate.set()
        await verifier.aclose()
    assert len(results) == 8 and all(isinstance(r, Principal) for r in results), results
    assert verifier.keys.fetches == 1 and issuer.hits["/jwks"] - hits.get("/jwks", 0) == 1
    metadata = "/.well-known/oauth-authorization-server"
    assert issuer.hits[metadata] - hits.get(metadata, 0) == 1


async def test_a_verified_token_is_not_checked_again_but_its_scope_is(issuer: Issuer) -> None:
    verifier = TokenVerifier(settings(issuer))
    token = issuer.token(RESOURCE)
    try:
        first = await verifier.verify(token)
        fetches = verifier.keys.fetches
        assert await verifier.verify(token) == first
        assert verifier.keys.fetches == fetches
    finally:
        await verifier.aclose()


async def test_an_opaque_token_is_introspected_and_refused_once_revoked(issuer: Issuer) -> None:
    token = "opaque-" + "x" * 30
    issuer.opaque[token] = {
        "active": True,
        "iss": issuer.url,
        "aud": [RESOURCE],
        "sub": "bob",
        "client_id": "cli",
        "scope": "mcp:tools",
        "exp": int(time.time()) + 600,
    }
    credentials = {"client_id": INTROSPECTION_CLIENT[0], "client_secret_env": "AUTH27_SECRET"}
    verifier = TokenVerifier(
        settings(issuer, introspection_cache_seconds=0, **credentials), client_secret=INTROSPECTION_CLIENT[1]
    )
    try:
        result = await verifier.verify(token)
        assert isinstance(result, Principal) and (result.subject, result.client_id) == ("bob", "cli")
        issuer.opaque[token] = {"active": False}  # revoked at the issuer
        refused(await verifier.verify(token), 401, "inactive", token)  # the replay is refused at once
        assert verifier.introspector.calls == 2
    finally:
        await verifier.aclose()
        issuer.opaque.pop(token, None)


async def test_an_introspection_answer_is_cached_within_its_limit_and_checked_for_audience(issuer: Issuer) -> None:
    token, other = "opaque-cached-token-value", "opaque-other-audience"
    answer = {"active": True, "aud": RESOURCE, "sub": "carol", "scope": "mcp:tools", "exp": int(time.time()) + 600}
    issuer.opaque.update({token: answer, other: {**answer, "aud": "https://elsewhere.example"}})
    verifier = TokenVerifier(
        settings(issuer, client_id=INTROSPECTION_CLIENT[0], client_secret_env="AUTH27_SECRET"),
        client_secret=INTROSPECTION_CLIENT[1],
    )
    try:
        assert isinstance(await verifier.verify(token), Principal)
        assert isinstance(await verifier.verify(token), Principal)
        assert verifier.introspector.calls == 1  # the second one came from the cache
        refused(await verifier.verify(other), 401, "audience", other)
    finally:
        await verifier.aclose()
        issuer.opaque.pop(token, None), issuer.opaque.pop(other, None)


async def test_an_opaque_token_without_introspection_is_refused(issuer: Issuer) -> None:
    refused(await verdict(issuer, "not-a-jwt-token"), 401, "format", "not-a-jwt-token")


async def test_a_1_mib_token_is_refused_by_its_size_without_a_fetch(issuer: Issuer) -> None:
    verifier = TokenVerifier(settings(issuer))
    try:
        token = "a" * (1 << 20)
        started = time.perf_counter()
        result = await verifier.verify_header("Bearer " + token)
        refused(result, 401, "size", token)
        assert verifier.keys.fetches == 0 and verifier.introspector.calls == 0
        del started
    finally:
        await verifier.aclose()


@pytest.mark.parametrize(
    ("header", "status", "check"),
    [
        (None, 401, "no token"),
        ("Basic YWxpY2U6c2VjcmV0", 401, "scheme"),
        ("Bearer", 400, "header"),
        ("Bearer ", 400, "header"),
        ("Bearer two tokens", 400, "header"),
        ("Bearer t\u00f6ken", 400, "header"),
        ("Bearer a,b", 400, "header"),
    ],
)
async def test_a_malformed_authorization_header(issuer: Issuer, header: str | None, status: int, check: str) -> None:
    verifier = TokenVerifier(settings(issuer))
    try:
        result = await verifier.verify_header(header)
        assert isinstance(result, Refusal) and (result.status, result.check) == (status, check)
        assert (result.error is None) == (status == 401)  # RFC 6750 3.1: no error code without a token
    finally:
        await verifier.aclose()


async def test_an_unreachable_issuer_is_a_503_not_a_401(issuer: Issuer) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    verifier = TokenVerifier(OAuthSettings(issuer=f"http://127.0.0.1:{port}", resource=RESOURCE))
    try:
        result = await verifier.verify(issuer.token(RESOURCE))
        assert isinstance(result, Refusal) and (result.status, result.error) == (503, None)
    finally:
        await verifier.aclose()


async def test_a_jwks_over_the_size_cap_or_metadata_naming_another_issuer_is_a_503(issuer: Issuer) -> None:
    token = issuer.token(RESOURCE)
    issuer.jwks_padding = 300 * 1024
    try:
        result = await verdict(issuer, token)
        assert isinstance(result, Refusal) and result.status == 503 and "more than" in result.description
    finally:
        issuer.jwks_padding = 0
    issuer.metadata_issuer = "http://127.0.0.1:1"  # RFC 8414 section 3.3: the metadata must name the issuer
    try:
        result = await verdict(issuer, token)
        assert isinstance(result, Refusal) and result.status == 503 and "another issuer" in result.description
    finally:
        issuer.metadata_issuer = None
    assert isinstance(await verdict(issuer, token), Principal)


def test_settings_refuse_none_hmac_and_plain_http_issuers() -> None:
    from pydantic import ValidationError

    for algorithms in (("none",), ("HS256",), ("RS256", "HS512")):
        with pytest.raises(ValidationError, match="cannot be accepted"):
            OAuthSettings(issuer="https://as.example", resource=RESOURCE, algorithms=algorithms)
    with pytest.raises(ValidationError, match="https"):
        OAuthSettings(issuer="http://as.example", resource=RESOURCE)
    with pytest.raises(ValidationError, match="fragment"):
        OAuthSettings(issuer="https://as.example", resource="https://mcp.example/mcp#x")
