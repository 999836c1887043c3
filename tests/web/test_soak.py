"""The soak test of ``c8env serve`` (``python -m c8env.web.soak``): a few seconds of it, and its report's fields.
No speed is asserted: only that the run stops by itself, answers every request and reports what it promises."""

from __future__ import annotations

import json
import sys

import pytest

from c8env.web.soak import build_parser, main, report_text, rss_mb


@pytest.mark.slow
def test_a_short_soak_stops_by_itself_without_errors_and_reports(tmp_path, capsys) -> None:
    out = tmp_path / "soak.json"
    main(["--games", "3", "--minutes", "0.05", "--sample-every", "1", "--abandon", "0.5", "--seed", "2",
          "--json", str(out)])
    text = capsys.readouterr().out
    for words in ("3 games at once", "requests", "errors 0", "p50", "p99", "server RSS", "at the start", "at the end",
                  "games held"):
        assert words in text, text
    report = json.loads(out.read_text())
    for key in ("games", "seconds", "requests", "errors", "p50_ms", "p99_ms", "rss_start_mb", "rss_end_mb",
                "rss_max_mb", "games_held_end", "games_held_max", "games_started", "games_finished",
                "games_abandoned", "games_dropped_idle", "samples"):
        assert key in report, key
    assert report["errors"] == 0 and report["first_failure"] is None, report["first_failure"]
    assert report["requests"] > 0 and report["games_started"] >= 3 and report["p99_ms"] >= report["p50_ms"] > 0
    assert report["seconds"] < 3 + 120  # it stopped by itself
    # every game not abandoned was dropped by its player: the server holds the abandoned ones not yet idle
    assert report["games_held_end"] == report["games_abandoned"] - report["games_dropped_idle"]
    if sys.platform.startswith("linux"):
        assert report["rss_start_mb"] > 0 and report["rss_end_mb"] > 0
        assert report["rss_max_mb"] >= max(report["rss_start_mb"], report["rss_end_mb"])
    assert report["samples"] and {"t", "rss_mb", "games"} <= set(report["samples"][0])


def test_the_soak_command_line_and_report() -> None:
    args = build_parser().parse_args([])
    assert (args.games, args.minutes) == (200, 10.0)
    with pytest.raises(SystemExit):
        main(["--games", "0"])
    report = {"games": 2, "seconds": 60.0, "games_started": 10, "games_finished": 8, "games_abandoned": 1,
              "requests": 1000, "requests_per_s": 16.7, "errors": 0, "p50_ms": 2.0, "p99_ms": 9.0, "max_ms": 20.0,
              "rss_start_mb": 70.0, "rss_max_mb": 75.0, "rss_end_mb": 74.0, "games_held_end": 1, "games_held_max": 3,
              "games_dropped_idle": 0, "server_cpu_s": 12.0, "first_failure": None}
    text = report_text(report)
    assert "requests 1,000" in text and "errors 0" in text
    assert "70 MiB at the start" in text and "74 MiB at the end" in text
    assert "games held 1 at the end" in text
    assert rss_mb(-1) is None
