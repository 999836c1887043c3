"""``c8env speed jax``: the JAX env's steps/s beside the batched engine's, printed (figures, never timed asserts)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("jax")

from c8env.tools.speed import bench_jax, build_parser  # noqa: E402


@pytest.mark.slow  # compiles a rollout and times it
def test_speed_jax_prints_a_row_per_batch(capsys: pytest.CaptureFixture[str]) -> None:
    bench_jax([64, 128], scan=2, runs=1)
    lines = capsys.readouterr().out.splitlines()
    assert re.match(r"jax: jit\(vmap\(step\)\) with observations, .* JAX [\d.]+ on cpu", lines[0]), lines[0]
    rows = [re.fullmatch(r" *([\d,]+) \| +([\d,]+) \| +[\d.]+ \| +([\d,]+) \| +([\d,]+)", line) for line in lines[2:]]
    assert [row.group(1) for row in rows] == ["64", "128"] and all(int(r.group(2).replace(",", "")) > 0 for r in rows)


def test_speed_jax_arguments() -> None:
    args = build_parser().parse_args(["jax", "--jax-batches", "1024", "65536", "--jax-scan", "4"])
    assert (args.what, args.jax_batches, args.jax_scan) == ("jax", [1024, 65536], 4)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["jax", "--jax-batches", "0"])
