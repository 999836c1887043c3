"""The catalog of c8env's shipped agents: ``catalog.yaml`` beside this module, the single source of
:func:`c8env.agents.available`, ``c8env agents``, the docs' agents page, the web page's opponents and the
leaderboard's roles.

Each entry says what an agent is (a built-in agent, a named search, a network file of the package), the players and
rules it was made for, its role (an opponent, a baseline, the guide or the rollouts of a search), how it was made
(method, config, command) and its headline figures, read from the benchmark's and the exploiter's results files.
Each setting a user is likely to pick (:class:`Setting`) names its recommended opponent.

    >>> from c8env.agents import catalog
    >>> catalog.recommended(players=4, rules="standard").name
    'ensemble-standard-4p'
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CATALOG_FILE = Path(__file__).with_name("catalog.yaml")
KINDS = ("builtin", "search", "network")
#: The opponents of the figures, as the standard benchmark names them (configs/bench/standard.yaml).
OPPONENTS = ("random", "greedy", "expert:simulations=20")


@dataclass(frozen=True)
class WinRate:
    """A win rate of the agent in one seat against ``opponent`` in every other seat, on duplicate deals."""

    opponent: str
    hands: int
    win_rate: float
    ci: tuple[float, float]
    fair_share: float
    cut_off: int = 0

    def __str__(self) -> str:
        text = f"{self.win_rate:.1%} [{self.ci[0]:.1%}, {self.ci[1]:.1%}]"
        return text + (f" ({self.cut_off} cut off)" if self.cut_off else "")

    @classmethod
    def from_dict(cls, opponent: str, data: Mapping[str, Any]) -> WinRate:
        return cls(opponent, int(data["hands"]), float(data["win_rate"]), (float(data["ci"][0]), float(data["ci"][1])),
                   float(data["fair_share"]), int(data.get("cut_off", 0)))

    def to_dict(self) -> dict[str, Any]:
        return {"hands": self.hands, "win_rate": self.win_rate, "ci": list(self.ci), "fair_share": self.fair_share,
                "cut_off": self.cut_off}


def gain_text(gain: float, win_rate: float, by: str = "learner") -> str:
    """An exploited figure in words: the best response's gain over its start in points of win rate, and its final
    win rate (``+4.1 (67.4%)``); where the best response was not the trained learner, which it was
    (``+5.4 (70.1%, search response)``)."""
    return f"{100 * gain:+.1f} ({win_rate:.1%}" + ("" if by == "learner" else f", {by}") + ")"


@dataclass(frozen=True)
class Figures:
    """An agent's figures in one setting: its win rates against :data:`OPPONENTS` (the benchmark's cells) and, where
    measured, the final win rate of the best response to it (``exploited``: the trained learner, or a search response
    where it won more, ``exploited_by``) and its gain over its start (``exploit_gain``), each with the file it came
    from."""

    rules: str
    players: int
    source: str
    measured_on: str
    against: Mapping[str, WinRate]
    exploited: WinRate | None = None
    exploited_source: str | None = None
    exploit_gain: float | None = None
    exploited_by: str = "learner"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Figures:
        exploited = data.get("exploited")
        return cls(str(data["rules"]), int(data["players"]), str(data["source"]), str(data["measured_on"]),
                   {k: WinRate.from_dict(k, v) for k, v in data["against"].items()},
                   None if exploited is None else WinRate.from_dict("best response", exploited),
                   None if exploited is None else str(exploited["source"]),
                   None if exploited is None else float(exploited["gain"]),
                   "learner" if exploited is None else str(exploited.get("by", "learner")))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"rules": self.rules, "players": self.players, "source": self.source,
                                "measured_on": self.measured_on,
                                "against": {k: v.to_dict() for k, v in self.against.items()}}
        if self.exploited is not None:
            data["exploited"] = {"gain": self.exploit_gain, **self.exploited.to_dict(), "source": self.exploited_source,
                                 "by": self.exploited_by}
        return data


@dataclass(frozen=True)
class Entry:
    """One shipped agent. ``players``/``rules`` None: it plays every setting (the built-in agents)."""

    name: str
    kind: str
    players: tuple[int, ...] | None
    rules: str | None
    role: str
    summary: str
    made_by: Mapping[str, str]
    file: Path | None = None
    spec: str | None = None
    figures: tuple[Figures, ...] = ()
    ms_per_move: float | None = None

    def plays(self, players: int | None = None, rules: str | None = None) -> bool:
        """Whether the agent was made for ``players`` and ``rules`` (None: any)."""
        return ((players is None or self.players is None or players in self.players)
                and (rules is None or self.rules is None or rules == self.rules))

    def figures_for(self, players: int, rules: str) -> Figures | None:
        """Its figures in that setting, if measured."""
        return next((f for f in self.figures if f.players == players and f.rules == rules), None)

    @property
    def is_search(self) -> bool:
        """Whether it is the expert search (the built-in ``expert`` or a named search of it): an agent without a
        batched form, which no exploiter trains against."""
        return (self.spec or self.name).partition(":")[0] == "expert"


@dataclass(frozen=True)
class Setting:
    """A setting a user is likely to pick, and the opponent the catalog recommends there (``stronger``: a slower
    agent that plays better still, if any)."""

    rules: str
    players: int
    recommended: str
    why: str
    stronger: str | None = None


@dataclass(frozen=True)
class Retired:
    """A name that shipped before and left the package: what replaces it and where its file now lives."""

    name: str
    replacement: str
    file: str

    def message(self) -> str:
        return (f"policy {self.name!r} was retired from the package in c8env 0.3: use {self.replacement!r} instead "
                f"(`c8env agents` lists the shipped agents); its file lives in c8env's repository at {self.file} "
                "(load it by path)")


@dataclass(frozen=True)
class Catalog:
    """The catalog file, read and checked (:func:`load_catalog`)."""

    entries: Mapping[str, Entry]
    settings: tuple[Setting, ...]
    retired: Mapping[str, Retired]
    header: str = field(default="", repr=False)

    def names(self, kind: str | None = None) -> list[str]:
        """The agents' names in catalog order (``kind``: only that kind)."""
        return [e.name for e in self.entries.values() if kind is None or e.kind == kind]

    def setting(self, players: int, rules: str) -> Setting | None:
        """The catalog's setting for ``players`` and ``rules``, if it has one."""
        return next((s for s in self.settings if s.players == players and s.rules == rules), None)


def _players(value: Any, where: str) -> tuple[int, ...] | None:
    if value == "any":
        return None
    if not isinstance(value, list) or not value or not all(isinstance(v, int) and 2 <= v <= 7 for v in value):
        raise ValueError(f"{where}: players={value!r} is invalid; allowed: 'any' or a list of ints in 2..7")
    return tuple(value)


def _entry(data: Mapping[str, Any], folder: Path) -> Entry:
    name = data.get("name")
    where = f"catalog entry {name!r}"
    kind = data.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{where}: kind={kind!r} is invalid; allowed: {', '.join(KINDS)}")
    file = folder / data["file"] if "file" in data else None
    if (kind == "network") != (file is not None) or (kind == "search") != ("spec" in data):
        raise ValueError(f"{where}: a network has a file, a search a spec, and nothing else has either")
    if file is not None and not file.is_file():
        raise ValueError(f"{where}: no such policy file {file}")
    rules = data.get("rules")
    return Entry(str(name), kind, _players(data.get("players"), where), None if rules == "any" else str(rules),
                 str(data["role"]), " ".join(str(data["summary"]).split()), dict(data.get("made_by", {})), file,
                 data.get("spec"), tuple(Figures.from_dict(f) for f in data.get("figures", ())),
                 data.get("ms_per_move"))


def load_catalog(path: str | Path = CATALOG_FILE) -> Catalog:
    """Read and check a catalog file (c8env's own by default): unknown kinds, missing files, a recommended agent
    that is not in it or a retired name that still is raise ``ValueError``."""
    path = Path(path)
    text = path.read_text()
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or data.get("format") != "c8env-catalog":
        raise ValueError(f"{path} is not a c8env catalog file (format: c8env-catalog)")
    entries: dict[str, Entry] = {}
    for item in data["agents"]:
        entry = _entry(item, path.parent)
        if entry.name in entries:
            raise ValueError(f"{path}: agent {entry.name!r} is listed twice")
        entries[entry.name] = entry
    settings = tuple(Setting(s["rules"], int(s["players"]), s["recommended"], s["why"], s.get("stronger"))
                     for s in data["settings"])
    for setting in settings:
        for name in (setting.recommended, setting.stronger):
            if name is not None and (name not in entries or not entries[name].plays(setting.players, setting.rules)):
                raise ValueError(f"{path}: the setting {setting.rules}, {setting.players} players names {name!r}, "
                                 "which is not a catalog agent made for it")
    retired = {r["name"]: Retired(r["name"], r["replacement"], r["file"]) for r in data.get("retired", ())}
    for item in retired.values():
        if item.name in entries or item.replacement not in entries:
            raise ValueError(f"{path}: retired {item.name!r} must be out of the catalog and its replacement in it")
    header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
    return Catalog(entries, settings, retired, header)


@functools.cache
def catalog() -> Catalog:
    """c8env's own catalog (read once)."""
    return load_catalog()


def entry(name: str) -> Entry:
    """The catalog entry of a shipped agent; ``KeyError`` naming the allowed ones otherwise."""
    entries = catalog().entries
    if name not in entries:
        raise KeyError(f"no catalog agent {name!r}; allowed: {', '.join(entries)}")
    return entries[name]


def recommended(players: int, rules: str = "standard") -> Entry | None:
    """The opponent the catalog recommends for ``players`` and ``rules``, or None where it names none."""
    setting = catalog().setting(players, rules)
    return None if setting is None else catalog().entries[setting.recommended]


def _cell(figures: Figures | None, opponent: str) -> str:
    rate = None if figures is None else figures.against.get(opponent)
    return "" if rate is None else str(rate)


def _exploited(entry: Entry, figures: Figures | None) -> str:
    if entry.is_search:
        return "no batched form (a search)"
    if figures is None or figures.exploited is None:
        return ""
    return gain_text(figures.exploit_gain, figures.exploited.win_rate, figures.exploited_by)


def _ms(entry: Entry) -> str:
    return "" if entry.ms_per_move is None else f"{entry.ms_per_move:.3g}"


def setting_table(players: int, rules: str, markdown: bool = True) -> str:
    """The catalog's agents made for one setting, with their figures there, and the recommended opponent."""
    cat = catalog()
    header = ["agent", "kind", "role", "vs random", "vs greedy", "vs expert:simulations=20", "exploited", "ms/move"]
    rows = []
    for item in cat.entries.values():
        if not item.plays(players, rules):
            continue
        figures = item.figures_for(players, rules)
        rows.append([item.name, item.kind, item.role, *(_cell(figures, o) for o in OPPONENTS),
                     _exploited(item, figures), _ms(item)])
    title = f"{rules}, {players} players (each agent in one seat against the opponent in every other; a fair share " \
            f"is {1 / players:.0%})"
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join([f"`{r[0]}`", *r[1:]]) + " |" for r in rows]
    else:
        widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [header, *rows]]
    return "\n".join([title, "", *lines, "", recommendation(players, rules)])


def recommendation(players: int, rules: str) -> str:
    """One or two sentences: the recommended opponent for a setting and its figures, or why there is none."""
    cat = catalog()
    setting = cat.setting(players, rules)
    if setting is None:
        return (f"No agent was trained for {rules}, {players} players: the built-in agents play every setting "
                "(`expert` is the strongest of them).")
    best = cat.entries[setting.recommended]
    figures = best.figures_for(players, rules)
    against = "" if figures is None else "; ".join(
        f"{rate} against {opponent}" for opponent, rate in figures.against.items() if opponent != "random")
    text = f"Recommended opponent for {rules}, {players} players: {best.name}" + (f": {against}." if against else ".")
    text += f" Why: {setting.why}."
    if setting.stronger is not None:
        strong = cat.entries[setting.stronger]
        strong_figures = strong.figures_for(players, rules)
        greedy = None if strong_figures is None else strong_figures.against.get("greedy")
        text += (f" Stronger still on many more hands (docs/strength.md), and slower: {strong.name}"
                 + (f" ({greedy} against greedy on the benchmark's hands)." if greedy else "."))
    return text


def _settings(players: int | None, rules: str | None) -> list[tuple[int, str]]:
    chosen = [(s.players, s.rules) for s in catalog().settings
              if (players is None or s.players == players) and (rules is None or s.rules == rules)]
    if not chosen and players is not None:
        chosen = [(players, rules or "standard")]
    return chosen


def cards() -> str:
    """The docs' agents page (Markdown): the recommended opponent of each setting, one card per catalog agent, then
    the retired names."""
    cat = catalog()
    out = ["### Which opponent", ""]
    out += [f"- {recommendation(s.players, s.rules)}" for s in cat.settings]
    out += ["", f"Figures: each agent in one seat against {', '.join(OPPONENTS)} in every other, on the standard "
            "benchmark's duplicate deals (95% Wilson intervals); *exploited*: the gain in win rate of a best response "
            "warm-started from a network and trained against the agent, over its start, and the exploiter's final win "
            "rate, or a search response's where it won more, marked ([Exploitability](exploitability.md)); *cut "
            "off*: hands stopped at the hand cap.", ""]
    for item in cat.entries.values():
        made_for = ("every setting" if item.players is None else
                    f"{item.rules}, {' or '.join(str(p) for p in item.players)} players")
        out += [f"### `{item.name}`", "", item.summary[0].upper() + item.summary[1:] + ".", "",
                f"- **kind**: {item.kind}" + (f" (`{item.spec}`)" if item.spec else "")
                + (f", `c8env/agents/{item.file.parent.name}/{item.file.name}`" if item.file else ""),
                f"- **made for**: {made_for}; **role**: {item.role}",
                f"- **made by**: {item.made_by.get('method', '')}"
                + (f"; `{item.made_by['command']}`" if "command" in item.made_by else "")]
        if item.ms_per_move is not None:
            out.append(f"- **time per move**: {_ms(item)} ms (`python -m training.catalog` on one core of the machine "
                       "that made the figures)")
        if item.figures:
            out += ["", "| setting | " + " | ".join(f"vs {o}" for o in OPPONENTS) + " | exploited | from |",
                    "|" + "---|" * (len(OPPONENTS) + 3)]
            out += [f"| {f.rules}, {f.players}p | " + " | ".join(_cell(f, o) for o in OPPONENTS)
                    + f" | {_exploited(item, f)} | `{f.source}`"
                    + (f", `{f.exploited_source}`" if f.exploited_source else "") + " |" for f in item.figures]
        out.append("")
    out += ["### Retired names", "", "| name | use instead | its file (in the repository) |", "|---|---|---|"]
    out += [f"| `{r.name}` | `{r.replacement}` | `{r.file}` |" for r in cat.retired.values()]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    """``c8env agents``: the shipped agents and the recommended opponent, per setting."""
    parser = argparse.ArgumentParser(prog="c8env agents", description=main.__doc__)
    parser.add_argument("--players", type=int, choices=range(2, 8), metavar="N", help="only this player count")
    parser.add_argument("--rules", help="only this preset (e.g. standard, special_cards)")
    parser.add_argument("--markdown", action="store_true", help="Markdown tables")
    args = parser.parse_args(argv)
    if args.rules is not None:
        from c8env.rules import preset_names

        if args.rules not in preset_names():
            parser.error(f"--rules {args.rules!r} is invalid; allowed: {', '.join(preset_names())}")
    print("\n\n".join(setting_table(p, r, args.markdown) for p, r in _settings(args.players, args.rules)))


__all__ = ["CATALOG_FILE", "KINDS", "OPPONENTS", "Catalog", "Entry", "Figures", "Retired", "Setting", "WinRate",
           "cards", "catalog", "entry", "gain_text", "load_catalog", "recommendation", "recommended", "setting_table"]
