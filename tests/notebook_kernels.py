"""nbval's kernels on Unix sockets, as the package's own kernels are.

nbval starts each notebook's kernel on loopback TCP ports: jupyter_client
picks them free, and the kernel binds them a moment later, once Python has
started (seconds, on a loaded machine). In a suite that starts kernels and
servers on every worker, another process picking ports the same way can take
one in between; that kernel dies ("Address already in use") and nbval
reports only "Kernel died before replying to kernel_info" (it sends the
kernel's stderr to /dev/null). CI saw exactly that once, on notebook 00.

:class:`NotebookKernelsOnUnixSockets` starts each nbval kernel with the
package's :func:`~echomq_viz.launcher._kernel_channels.private_kernel_config`:
its connection file in a 0700 folder of its own, and its channels on Unix
sockets beside it, which nobody else can take (or, where no folder takes a
socket, loopback ports, as the package's kernels then use). Each folder is
held until the session ends, because a kernel outlives the call that starts
it. The kernel's stderr goes to a file there, so a kernel that dies as it
starts is reported with its last lines.

It replaces ``nbval.kernel.start_new_kernel`` (one function, with nbval's
signature), which is why pyproject.toml caps nbval.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

STDERR_TAIL = 2000  # characters of a dead kernel's stderr in its report


class NotebookKernelsOnUnixSockets:
    def __init__(self) -> None:
        self.folders = contextlib.ExitStack()  # each kernel's, until the session ends
        self.replaced = None  # nbval's start_new_kernel, while ours stands in for it

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        import nbval.kernel

        self.replaced, nbval.kernel.start_new_kernel = nbval.kernel.start_new_kernel, self.start_new_kernel

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.replaced is not None:
            import nbval.kernel

            nbval.kernel.start_new_kernel, self.replaced = self.replaced, None
        self.folders.close()

    def start_new_kernel(self, startup_timeout: float = 60, kernel_name: str = "python", **kwargs):
        """nbval's ``start_new_kernel``, with the kernel in a folder of its own (``private_kernel_config``)."""
        from jupyter_client.manager import KernelManager
        from nbval.kernel import NbvalKernelspecManager

        from echomq_viz.launcher._kernel_channels import private_kernel_config

        config = self.folders.enter_context(private_kernel_config())
        manager = KernelManager(kernel_name=kernel_name, kernel_spec_manager=NbvalKernelspecManager(),
                                config=config)
        stderr_path = Path(config.KernelManager.connection_file).with_suffix(".stderr")
        with open(stderr_path, "wb") as stderr:  # the kernel keeps its own descriptor
            manager.start_kernel(**{**kwargs, "stderr": stderr})
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=startup_timeout)
        except RuntimeError as exc:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
            said = stderr_path.read_text(encoding="utf-8", errors="replace")[-STDERR_TAIL:]
            raise RuntimeError(f"{exc}; its stderr ended:\n{said or '(nothing)'}") from exc
        return manager, client
