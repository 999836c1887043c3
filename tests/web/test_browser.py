"""The page in a real browser: Chromium (the system's, driven by Playwright) plays a whole
2-player hand against greedy by clicking legal cards, declaring suits and drawing.

Skipped only when no Chromium binary exists (``apt-get install chromium``; CI installs it).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
import uvicorn

from c8env.web.app import create_app
from c8env.web.games import GameManager

CHROMIUM = next((p for p in (os.environ.get("C8ENV_CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser"),
                             "/usr/bin/chromium") if p and Path(p).is_file()), None)
#: Headless on a closed network: without the background-networking flags Chromium's own
#: connections are refused many at a time.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install chromium; .ci/run does)")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server():
    """A real server on the loopback address, in a thread; yields (base url, its GameManager)."""
    manager = GameManager()
    port = free_port()
    config = uvicorn.Config(create_app(manager), host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", manager
    srv.should_exit = True
    thread.join(10)
    manager.close()


def test_play_a_whole_hand_against_greedy_in_chromium(server, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    base, manager = server
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda err: errors.append(str(err)))
            page.goto(base + "/")
            page.wait_for_selector("#agent-1 option[value=greedy]", state="attached")
            page.select_option("#players", "4")  # the catalog's recommended opponent is marked per setting
            assert page.inner_text("#agent-1 option[value=ensemble-standard-4p]") == "ensemble-standard-4p (recommended)"
            page.select_option("#players", "2")
            page.select_option("#rules", "special_cards")
            assert page.inner_text("#agent-1 option[value=expert]") == "expert (recommended)"
            page.select_option("#rules", "standard")
            page.select_option("#agent-1", "greedy")
            page.fill("#seed", "25")  # a deal where you play cards, declare a suit after an eight and draw
            page.eval_on_selector("#delay", "e => { e.value = '0'; e.dispatchEvent(new Event('input')); }")
            page.click("#start")
            clicked = {"card": 0, "declare": 0, "draw": 0, "other": 0}
            for _ in range(500):
                page.wait_for_selector("body[data-status=your_turn], body[data-status=finished], body[data-status=error]",
                                       state="attached", timeout=20_000)
                status = page.get_attribute("body", "data-status")
                if status != "your_turn":
                    break
                renders = int(page.get_attribute("body", "data-renders"))
                if page.is_visible("#suit-picker button"):
                    page.click("#suit-picker button >> nth=0")
                    clicked["declare"] += 1
                elif page.locator("#hand button.card:enabled").count():
                    page.click("#hand button.card:enabled >> nth=0")
                    clicked["card"] += 1
                else:
                    for button in ("#btn-announce", "#btn-draw", "#btn-pass", "#btn-stop"):
                        if page.is_visible(button):
                            page.click(button)
                            clicked["draw" if button == "#btn-draw" else "other"] += 1
                            break
                    else:
                        raise AssertionError("your turn but no legal move is offered on the page")
                page.wait_for_function(f"() => +document.body.dataset.renders > {renders}", timeout=20_000)
            assert page.get_attribute("body", "data-status") == "finished", page.inner_text("#status")
            page.wait_for_selector("#end", state="visible")
            (game,) = manager.games.values()
            result = game.view()["result"]
            title = page.inner_text("#end-winner")
            if result["winner"] is None:
                assert "tie" in title
            elif result["winner"] == game.seat:
                assert title == "You win the hand!"
            else:
                assert title == f"player_{result['winner']} wins the hand"
            scores = page.locator("#end-scores td.score").all_inner_texts()
            assert [int(s) for s in scores] == result["scores"]
            assert clicked["card"] > 0 and clicked["declare"] > 0 and clicked["draw"] > 0, clicked
            assert sum(clicked.values()) == sum(
                1 for a in game.hands[0]["actions"]) - sum(1 for e in game.log if e["seat"] != game.seat)
            assert page.is_visible("#btn-download") and page.is_visible("#btn-watch")
            shot = tmp_path / "end-screen.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
            # The replay view of the same game steps forwards and backwards.
            page.click("#btn-watch")
            page.wait_for_selector("#replay-body", state="visible")
            page.click("#rp-last")
            assert page.inner_text("#rp-step").startswith(f"step {len(game.hands[0]['actions'])} /")
            page.click("#rp-prev")
            assert page.inner_text("#rp-step").startswith(f"step {len(game.hands[0]['actions']) - 1} /")
            other = f"#rp-table .seat[data-seat='{1 - game.seat}']"
            assert page.locator(other + " .open .card").count() > 0  # all hands open (the default)
            page.select_option("#replay-seat", str(game.seat))  # your seat's view: the other hand hidden
            assert page.locator(other + " .open .card").count() == 0 and page.locator(other + " .backs .mini").count() > 0
            assert page.locator("#rp-table .hand .card").count() > 0
            assert not errors, errors
        finally:
            browser.close()
