"""The names of the schema profiles, and which one applies when none is named: one place.

Every signature, command-line choice list, config field and docstring of the package that
takes a profile uses or cites these (spec, "Two profiles"; issue 11, item 8 for the default).
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["DEFAULT_PROFILE", "PROFILES", "PROFILE_CHOICES", "SUMMARIES", "ProfileName"]

ProfileName = Literal["extended", "standard", "strict"]
"""The type of a profile name (the gateway config's ``guard.profile`` is validated against it)."""

PROFILES: Final[tuple[ProfileName, ...]] = get_args(ProfileName)
"""Every profile name, in the order commands list them: ``("extended", "standard", "strict")``."""

DEFAULT_PROFILE: Final[ProfileName] = "extended"
"""The profile of every command and API function that is not given one: ``"extended"`` (issue 11,
item 8: the JSON Schema real servers emit, every keyword enforced exactly)."""

PROFILE_CHOICES: Final = "|".join(PROFILES)
"""The ``--profile`` values as usage lines show them: ``"extended|standard|strict"``."""

SUMMARIES: Final[dict[ProfileName, str]] = {
    "extended": (
        "enforces JSON Schema 2020-12 (draft-07, draft-06 and 2019-09 when `$schema` names them) as real "
        "servers emit it, every keyword exactly"
    ),
    "standard": "the reference host's keyword table plus annotations such as title and default, and a root "
    "$schema of a compatible dialect",
    "strict": "accepts only the reference host's keyword table",
}
"""What each profile accepts, in a phrase (``--help``); the contracts are the spec's "Two profiles"
and "The extended profile"."""
