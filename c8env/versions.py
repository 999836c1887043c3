"""The env versions: what each released version of the environment gives a learner, for ever.

A version is a promise (PettingZoo's and Gymnasium's convention): whatever can change what a learner sees or
gets (the observation's layout or size, rewards, an argument's default, a preset's rules) is a new version, and
the old ids keep their old behaviour. :data:`VERSIONS` is the table; every env reads its row, and
``tests/envs/test_versions.py`` holds the code to it (each version's layout pinned, golden playthroughs of
each version's observations).

=======  ===========  =================  ======================================================================
version  observation  ``max_steps``      what changed
=======  ===========  =================  ======================================================================
v0       245          100,000            the first release
v1       245          10,000             ``max_steps`` defaults to the tools' cap, so a stalled hand costs seconds
v2       401          10,000             the observation appends ``opponent_last_draws``,
                                         ``opponent_suit_draws`` and ``opponent_declared`` (the first 245
                                         entries are v1's)
=======  ===========  =================  ======================================================================

A version's observation is the first ``obs_size`` entries of the newest one (:data:`c8env.observation.OBS_LAYOUT`):
each version so far appended entries and changed none. The rules, rewards and presets are the same in every
version. NumPy only.
"""

from __future__ import annotations

from dataclasses import dataclass

from c8env.episode import MAX_HAND_STEPS, V0_MAX_STEPS
from c8env.observation import OBS_LAYOUT, OBS_SIZE


@dataclass(frozen=True)
class EnvVersion:
    """One released version of the environment: what its ids give a learner."""

    number: int
    """The N of ``crazy_eights_vN`` and of the ``-vN`` ids."""
    obs_size: int
    """Entries of the observation vector: the first ``obs_size`` of :data:`c8env.observation.OBS_LAYOUT`'s."""
    max_steps: int
    """The default ``max_steps``: moves of one hand before every agent is truncated."""
    changes: str
    """What this version changed from the one before (the docstrings' version history)."""

    @property
    def name(self) -> str:
        """The PettingZoo module name, ``crazy_eights_vN``."""
        return f"crazy_eights_v{self.number}"

    @property
    def layout(self) -> dict[str, slice]:
        """Name -> slice of this version's observation vector."""
        return {name: part for name, part in OBS_LAYOUT.items() if part.stop <= self.obs_size}

    @property
    def global_state_size(self) -> int:
        """Length of PettingZoo's ``env.state()``: one observation per seat slot (7)."""
        return 7 * self.obs_size


#: Every released version, oldest first. A new row for any change a learner can see; a row never changes.
VERSIONS: tuple[EnvVersion, ...] = (
    EnvVersion(0, 245, V0_MAX_STEPS, "the first release"),
    EnvVersion(1, 245, MAX_HAND_STEPS, "max_steps defaults to 10,000, the tools' cap (v0: 100,000), so a stalled "
                                       "hand is truncated in seconds"),
    EnvVersion(2, OBS_SIZE, MAX_HAND_STEPS, "the observation appends opponent_last_draws, opponent_suit_draws and "
                                            "opponent_declared: 401 entries, the first 245 those of v1"),
)
#: The newest version: ``c8env.env``, ``c8env.raw_env`` and the classes' defaults.
LATEST: EnvVersion = VERSIONS[-1]
#: The observation sizes of the released versions, newest first (a policy or model of one of these plays any env).
OBS_SIZES: tuple[int, ...] = tuple(sorted({v.obs_size for v in VERSIONS}, reverse=True))


def get_version(version: object) -> EnvVersion:
    """The row of ``version`` (an int N, or ``"vN"``); a ``ValueError`` naming the released ones otherwise."""
    number = version[1:] if isinstance(version, str) and version.startswith("v") else version
    for row in VERSIONS:
        if not isinstance(number, bool) and (number == row.number or number == str(row.number)):
            return row
    raise ValueError(f"version={version!r} is invalid; allowed: {', '.join(str(v.number) for v in VERSIONS)} "
                     f"(the newest, {LATEST.number}, is the default)")


def sizes_help() -> str:
    """The observation size of each version, for error messages: ``v0 245, v1 245, v2 401``."""
    return ", ".join(f"v{v.number} {v.obs_size}" for v in VERSIONS)


def check_obs_size(size: object, what: str) -> int:
    """``size`` if it is a released version's observation size; else a ``ValueError`` naming ``what`` and the sizes
    each version has."""
    if isinstance(size, bool) or size not in OBS_SIZES:
        raise ValueError(f"{what} takes observations of {size} entries; c8env's observations have "
                         f"{' or '.join(map(str, OBS_SIZES))} entries ({sizes_help()})")
    return int(size)


__all__ = ["LATEST", "OBS_SIZES", "VERSIONS", "EnvVersion", "check_obs_size", "get_version", "sizes_help"]
