"""The notebooks' kernels under nbval (tests/notebook_kernels.py): each on
Unix sockets in a 0700 folder of this test process, none of them a port that
another process could take before the kernel binds it; a kernel that dies as
it starts is reported with what it said."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHANNELS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")


def test_nbval_starts_a_notebooks_kernel_on_unix_sockets_of_its_own(tmp_path):
    from nbval.kernel import CURRENT_ENV_KERNEL_NAME, RunningKernel

    kernel = RunningKernel(CURRENT_ENV_KERNEL_NAME, cwd=str(tmp_path))  # as nbval starts one per notebook
    try:
        info, connection_file = kernel.km.get_connection_info(), Path(kernel.km.connection_file)
        folder = connection_file.parent
        sockets = [Path(f"{info['ip']}-{info[channel]}") for channel in CHANNELS]
        assert info["transport"] == "ipc"
        assert folder.stat().st_mode & 0o777 == 0o700 and folder.stat().st_uid == os.getuid()
        assert all(path.parent == folder and path.is_socket() for path in sockets), sockets
        assert kernel.is_alive()
        msg_id = kernel.execute_cell_input("print(6 * 7)", allow_stdin=False)
        printed = []
        while True:
            msg = kernel.get_message(stream="iopub", timeout=30)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                printed.append(msg["content"]["text"])
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        assert printed == ["42\n"]
    finally:
        kernel.stop()
    assert not any(path.exists() for path in sockets)
    assert not connection_file.exists()


def test_a_kernel_that_dies_as_it_starts_is_reported_with_its_last_words(tmp_path):
    import nbval.kernel

    (tmp_path / "sitecustomize.py").write_text(
        "import os, sys\nsys.stderr.write('this kernel stops before it starts\\n')\nsys.stderr.flush()\nos._exit(3)\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}  # its sitecustomize runs as Python starts
    with pytest.raises(RuntimeError) as raised:
        nbval.kernel.start_new_kernel(kernel_name=nbval.kernel.CURRENT_ENV_KERNEL_NAME, startup_timeout=30,
                                      cwd=str(tmp_path), env=env)
    said = str(raised.value)
    assert said.startswith("Kernel died before replying to kernel_info; its stderr ended:"), said
    assert said.endswith("this kernel stops before it starts\n"), said
