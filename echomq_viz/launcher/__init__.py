"""The face: the ``echomq-viz`` command and what it serves.

The command itself (:mod:`.cli`, reached through :mod:`._entry`, which a Ctrl-C during its import
stops in one line; its arguments :mod:`.command_line`, what is refused before anything starts
:mod:`.preflight`), JupyterLab as ``lab`` runs it
(:mod:`._jupyterlab`, :mod:`.lab_settings`, its kernel websockets without Nagle's delay
:mod:`.kernel_websocket`; both servers, the export and
the refresh start without an unused grammar: :mod:`._startup`), the app (Voila, :mod:`._voila`;
its server :mod:`._app_server`, its kernels :mod:`._app_kernel` and a stopped kernel's keys
removed once its lease lapsed (:mod:`._app_orphans`), its front page
:mod:`.app_index` and template :mod:`.app_template`, its seats :mod:`.seats`),
a student's server on a JupyterHub (:mod:`.hub`, :mod:`._singleuser`), the gate before a shared
Redis run in the foreground (:mod:`.gate_command`), the operator's ``clean`` and ``acl add``
(:mod:`.operator_commands`), who may reach them
(:mod:`.exposure`), the kernels' channels (:mod:`._kernel_channels`), the
reader's copy of the notebooks (:mod:`.notebook_copies`), trusted
(:mod:`.trust`), the installed versions checked (:mod:`.versions`), the
offline pages (:mod:`.export`; what each says of its figures, :mod:`.page_notice`; one notebook's run,
which a Ctrl-C stops cleanly, :mod:`._notebook_run`) and the maintainers' tools: the stored stills
(:mod:`._stills`; each page view's drawn by headless Chromium, :mod:`.page_stills`), the re-run that stores them (:mod:`._refresh`), the
Binder/Colab cell (:mod:`._notebook_chrome`) and the README's picture
(:mod:`.readme_picture`).

May import: every other layer. Nothing imports it but ``echomq_viz.__main__``.
"""
