"""The app's Voila reads binary frames without trusting their first bytes."""

import json
import time

import pytest
from jupyter_server.services.kernels.connection.base import serialize_msg_to_ws_v1

from echomq_viz.launcher._voila import read_v1_header


def test_a_v1_frame_gives_its_header():
    message = {"header": {"msg_id": "1", "msg_type": "comm_msg"}, "parent_header": {}, "metadata": {},
               "content": {"data": {}}}
    frame = serialize_msg_to_ws_v1(message, "iopub", pack=lambda part: json.dumps(part).encode())
    frame += b"\x89PNG, a buffer"
    assert read_v1_header(frame)["msg_type"] == "comm_msg"


@pytest.mark.parametrize("frame", [
    (10**18).to_bytes(8, "little") + b"legacy frame: the JSON length, then the JSON and buffers",
    (2**64 - 1).to_bytes(8, "little") + bytes(64),
    b"\x02\x00\x00\x00\x00\x00\x00\x00" + bytes(32),
    b"short",
    b"",
])
def test_a_frame_that_is_not_v1_has_no_header_and_costs_nothing(frame):
    start = time.perf_counter()
    assert read_v1_header(frame) is None
    assert time.perf_counter() - start < 1.0  # Voila's own reader would build 10**18 offsets


def test_the_app_runs_voila_with_the_bounded_reader(tmp_path, monkeypatch):
    from echomq_viz.launcher import cli

    seen = []
    monkeypatch.setattr(cli, "_serve", lambda argv, env, **_: seen.append(argv) or 0)
    (tmp_path / "01.ipynb").write_text("{}")
    assert cli.main(["app", "--no-browser", "--notebooks", str(tmp_path)]) == 0
    assert seen[0][1:3] == ["-m", "echomq_viz.launcher._voila"]
