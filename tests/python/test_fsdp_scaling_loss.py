"""FSDP's exposed all-gathers and reduce-scatters per type, phase, layer and process group as parts of
communication in "where scaling is lost" (issue 33 item 4), on real PyTorch: tests/python/gloo_fsdp.py (FSDP2,
`fully_shard` on each of 4 linear layers, over gloo) recorded as a scaleprof run at 1 and 2 ranks (epoch 0
profiled), layers.2's forward all-gather joined DELAY_MS late by every rank, then `scaleprof report`.

Known answer: at 1 rank FSDP gathers nothing (no part); at 2 the part "allgather in forward, layers.2 (group
0)" is the largest all-gather part, and per profiled step it exceeds the other layers' forward all-gathers (the
same calls without the delay) by DELAY_MS within 20 %. The parts are inside communication's points: never more
than it. (At 4 ranks on the 2-core development machine the parts are scaled down to fit the decomposition's
communication, by 0.65, and the delay read 51-55 ms: docs/fsdp.md.)
"""
import json

import pytest

from conftest import decomposed_loss, mean_profiled_step_s, report_json, seconds_in_steps, torchrun

pytestmark = pytest.mark.timing  # the delay is a known answer in wall time

LAYERS = 4
STEPS = 7  # per epoch; epoch 0: 1 warm-up step, 6 recorded, 5 analysed (the last is left out)
DELAY_MS = 80.0
SCALES = (1, 2)


@pytest.fixture(scope="module")
def report(tmp_path_factory, scaleprof_cli):
    root = tmp_path_factory.mktemp("fsdp-loss")
    for nproc in SCALES:
        torchrun("gloo_fsdp.py", nproc, ["--root", root, "--steps", STEPS, "--epochs", "2", "--layers", LAYERS,
                                         "--delay-layer", "2", "--delay-ms", DELAY_MS, "--delay-rank", "-1"],
                 timeout=300)
    return {"json": report_json(scaleprof_cli, root), "root": root}


def test_fsdp_parts_of_communication(report, scaleprof_cli):
    data = report["json"]
    row, causes = decomposed_loss(data, 2)
    comm = causes["communication"]
    parts = {p["part"]: p for p in comm["parts"]}
    print(json.dumps(comm, indent=1))
    delayed = "allgather in forward, layers.2 (group 0)"
    assert delayed in parts, sorted(parts)
    for i in range(LAYERS):
        assert f"reduce_scatter in backward, layers.{i} (group 0)" in parts, sorted(parts)
    gathers = {k: v for k, v in parts.items() if k.startswith("allgather")}
    assert max(gathers, key=lambda k: gathers[k]["seconds_per_epoch_to"]) == delayed
    # Inside communication: their sum never more than it. One rank gathers nothing: no part there.
    assert all(p["seconds_per_epoch_from"] == 0 for p in parts.values()), parts
    total = sum(p["seconds_per_epoch_to"] for p in parts.values())
    assert 0 < total <= comm["seconds_per_epoch_to"] * (1 + 1e-6)
    assert row["fsdp_exposed_pts"] == pytest.approx(sum(p["pts"] for p in parts.values()), abs=0.05)
    assert "of it, allgather in forward, layers.2 (group 0)" in comm["detail"]
    # The delay, per profiled step: the part's share of the steps times the decomposed rank's mean step (the
    # rank that waited longest; the first when none did), less the other layers' forward all-gathers.
    others = [f"allgather in forward, layers.{i} (group 0)" for i in range(LAYERS) if i != 2]
    baseline = sum(parts[k]["seconds_per_epoch_to"] for k in others if k in parts) / len(others)
    added_share = (parts[delayed]["seconds_per_epoch_to"] - baseline) / seconds_in_steps(data, causes, 2, "to")
    # Any rank: with the same delay on every rank each has the same added exposed time.
    step_s = mean_profiled_step_s(scaleprof_cli, report["root"] / "fsdp", 2, 0, STEPS - 2)
    added_ms = added_share * step_s * 1e3
    print(f"2 ranks: layers.2 forward all-gather {added_ms:.1f} ms per step above the others")
    assert added_ms == pytest.approx(DELAY_MS, rel=0.20), added_ms
