"""Regenerate the wizard screenshots in this folder: one real study, every page at 1280×800 and 1024×640.

    xvfb-run -s "-screen 0 1280x800x24" .venv/bin/python docs/screenshots/capture.py

Each page is saved at 1280×800 here and at 1024×640 (the smallest window
the wizard supports) in `1024x640/`.

Runs the real backend (`python -m trainer_backend`) on a built-in workload,
clicks through the pages as a user would, and saves each page as PNG. Under
an X server (Xvfb) it also saves what the X server shows (`screen.png`), to
check that the window renders the same outside the offscreen platform.

`1-workload-script-remote` shows the fields only a training script and a
remote host bring ("Script options", "Run on: ssh host"). No host is
reachable here, so TFTURBO_SSH points at a stand-in for ssh that runs the
remote command on this machine: the hardware report under "Host …" goes
through the real remote path (upload, backend, clean-up) but describes this
machine.

`3-mixed-precision-running` is the trial's second pair going, both arms plotted: the page's
progress line (pair, time left), the trial's plan and the study's stages
still to come. `--large` also saves that page finished at 1920×1080 in the
temporary folder, to look at.

`5-compare-needs-confirmation` is taken only when a rung was kept (on a CPU
that is down to the noise); when none was, there is no such state to show
and no file is written (README does not link it).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402  (pillow comes with reportlab, a dependency of the report)
from PySide6.QtCore import QEvent  # noqa: E402

from tfturbo_gui.app import make_app  # noqa: E402


def save_small(pixmap, path: Path) -> None:
    """A 256-colour PNG, a fraction of the size, in which every colour stays within a few units of its own.

    A page has a few thousand colours, nearly all of them antialiasing. The
    palette keeps the EXACT most frequent colours as they are (fills, text,
    grid lines), then, in order of frequency, every colour farther than
    SPREAD (the sum of the channels' differences) from all those chosen, so a
    rare but distinct colour (a status dot, a marker) keeps a palette entry;
    each pixel takes the nearest entry. Pillow's quantizers lost such colours:
    fast octree merged the plots' white, the page's background and the minor
    grid lines into one (the minor grid vanished), median cut drew the orange
    "above the range" markers grey and a green status dot teal."""
    pixmap.save(str(path))
    pixels = np.asarray(Image.open(path).convert("RGB"), dtype=np.int64)
    keys = (pixels[..., 0] << 16) | (pixels[..., 1] << 8) | pixels[..., 2]
    colours, index, counts = np.unique(keys.ravel(), return_inverse=True, return_counts=True)
    rgb = np.stack([(colours >> 16) & 255, (colours >> 8) & 255, colours & 255], axis=1)
    order = np.argsort(-counts, kind="stable")
    chosen = list(order[:EXACT])
    for i in order[EXACT:]:
        if len(chosen) == 256:
            break
        if np.abs(rgb[chosen] - rgb[i]).sum(axis=1).min() > SPREAD:
            chosen.append(i)
    taken = set(chosen)
    chosen += [i for i in order if i not in taken][:256 - len(chosen)]  # room left: the next most frequent
    palette = rgb[chosen]
    nearest = np.argmin(((rgb[:, None, :] - palette[None, :, :]) ** 2).sum(axis=2), axis=1)
    image = Image.fromarray(nearest[index].reshape(keys.shape).astype(np.uint8), mode="P")
    image.putpalette(palette.astype(np.uint8).ravel().tolist())
    image.save(path, optimize=True)


EXACT, SPREAD = 64, 20


FAKE_SSH = """\
import os, subprocess, sys
# a stand-in for ssh: `ssh [options] -- HOST COMMAND` runs COMMAND here, with `python3` the capture's Python
args = sys.argv[1:]
command = args[args.index("--") + 2]
bin_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")
env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
sys.exit(subprocess.call(["sh", "-c", command], env=env))
"""


def fake_ssh() -> str:
    """A TFTURBO_SSH command that runs the 'remote' command on this machine (see the module docstring)."""
    folder = Path(tempfile.mkdtemp(prefix="fake-ssh-"))
    (folder / "ssh.py").write_text(FAKE_SSH)
    (folder / "bin").mkdir()
    python3 = folder / "bin" / "python3"
    python3.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python3.chmod(0o755)
    return f"{sys.executable} {folder / 'ssh.py'}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="builtin:fp16-softmax-head")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--running-workload", default="builtin:transformer",
                        help="workload for the screenshot of a run in progress")
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--large", action="store_true", help="also save one page at 1920×1080 (in the temp folder)")
    args = parser.parse_args()
    os.environ["TFTURBO_SSH"] = fake_ssh()
    app = make_app()
    from tfturbo_gui.main_window import MainWindow

    window = MainWindow(args.workload, steps=args.steps)
    window.resize(1280, 800)
    window.move(0, 0)
    window.show()

    def process_events() -> None:
        """What the event loop would do. Without app.exec() Qt never runs deleteLater(): widgets a page
        replaces (a card's rows, a finding) would stay painted under the new ones."""
        app.processEvents()
        app.sendPostedEvents(None, QEvent.Type.DeferredDelete)

    def wait(cond, timeout: float = 600) -> None:
        end = time.time() + timeout
        while not cond():
            if time.time() > end:
                raise TimeoutError("the page did not finish in time")
            process_events()
            time.sleep(0.02)

    def settle() -> None:
        for _ in range(15):  # let the plots' timer repaint
            process_events()
            time.sleep(0.03)

    small = args.out / "1024x640"
    small.mkdir(exist_ok=True)

    def shot(name: str) -> None:
        for size, folder in (((1024, 640), small), ((1280, 800), args.out)):
            window.resize(*size)
            settle()
            save_small(window.grab(), folder / f"{name}.png")
        print("saved", name, flush=True)

    pages = window.pages
    study = str(Path(tempfile.mkdtemp()) / "study")
    pages[0].study_edit.setText(study)
    wait(lambda: window.session.environment is not None)
    shot("1-workload")

    # a training script with its own options, run on an ssh host (see the module docstring)
    workload_page = pages[0]
    workload_page._select("builtin:train-script")
    workload_page.script_edit.setText("--epochs 3 --lr 0.001")
    workload_page.run_on.setCurrentIndex(1)
    workload_page.host_edit.setText("me@gpu-box")
    workload_page.host_edit.editingFinished.emit()  # as when the user leaves the field: the report is asked there
    wait(lambda: window.session.environment is not None and not workload_page.env_panel.is_running())
    shot("1-workload-script-remote")
    workload_page.run_on.setCurrentIndex(0)  # back to this machine and the study's workload
    workload_page.script_edit.setText("")
    workload_page._select(args.workload)
    workload_page.study_edit.setText(study)
    wait(lambda: window.session.environment is not None and not workload_page.env_panel.is_running())
    window._on_next()
    wait(lambda: window.current() == 1)
    pages[1].start()
    wait(lambda: pages[1].measure_button.isEnabled())
    shot("2-baseline")
    window._on_next()
    wait(lambda: window.current() == 2 and pages[2].run_button.isEnabled())
    pages[2].start_run()
    if pages[2].rung is None:  # the engine measured nothing (a skipped stage) or a run may not start now
        raise SystemExit(f"the mixed-precision trial did not start: {pages[2].busy_note.text() or 'skipped'}")
    # the trial's second pair: the page says where it stands, its plan and the rest of the study's estimate
    # ... once both of its arms have plotted steps (at its start the plots are empty: the backend loads)
    wait(lambda: pages[2].rung.decision is not None or (
        pages[2].plan_note.text().startswith("Pair 2") and
        min(pages[2].plots.plotted_lengths()["step_ms"] or [0]) >= 20 and
        len(pages[2].plots.plotted_lengths()["step_ms"]) == 2))
    if pages[2].rung.decision is None:
        shot("3-mixed-precision-running")
    wait(lambda: pages[2].rung.decision is not None)
    shot("3-mixed-precision")
    if args.large:  # one page at a large screen's size, to look at (not kept in the folder)
        window.resize(1920, 1080)
        settle()
        save_small(window.grab(), Path(tempfile.gettempdir()) / "3-mixed-precision-1920x1080.png")
        print("saved", Path(tempfile.gettempdir()) / "3-mixed-precision-1920x1080.png", flush=True)
    window._on_next()
    wait(lambda: window.current() == 3 and pages[3].run_button.isEnabled())
    pages[3].start_run()
    wait(lambda: pages[3].rung.decision is not None)
    shot("4-xla")
    window._on_next()  # the batch size (the wizard's order: the levers', then the confirmation)
    wait(lambda: window.current() == 4 and pages[4].run_button.isEnabled())
    pages[4].start_run()
    wait(lambda: pages[4].rung is not None and pages[4].rung.decision is not None)
    shot("6-batch-size")
    window._on_next()
    wait(lambda: window.current() == 5)
    compare = pages[5]
    if compare.candidate() is not None:  # something was kept: confirm it against the baseline
        shot("5-compare-needs-confirmation")
        compare.start_run()
        wait(lambda: compare.confirmation is not None and compare.confirmation.decision is not None)
    else:  # nothing to confirm: the page has no such state in this study
        print("note: nothing was kept, so there is no 5-compare-needs-confirmation.png", flush=True)
    shot("5-compare")
    window._on_next()
    shot("7-record-report")
    print("study:", window.session.study.path, flush=True)
    if app.platformName() == "xcb":
        settle()
        save_small(app.primaryScreen().grabWindow(0), args.out / "screen.png")
        print("saved screen (the X server's framebuffer)", flush=True)
    browser = window.show_browser()
    browser.resize(1280, 800)
    browser.open_study(window.session.study.path)
    for size, folder in (((1024, 640), small), ((1280, 800), args.out)):
        browser.resize(*size)
        settle()
        save_small(browser.grab(), folder / "8-run-browser.png")
    print("saved 8-run-browser", flush=True)
    browser.close()
    window.close()

    # a run in progress, on a workload slow enough to watch (the transformer: ~0.2 s a step on a CPU)
    window = MainWindow(args.running_workload, steps=args.steps)
    window.confirm_close = False  # closing stops the run without asking
    window.resize(1280, 800)
    window.show()
    window.pages[0].study_edit.setText(str(Path(tempfile.mkdtemp()) / "study"))
    wait(lambda: window.session.environment is not None)
    window._on_next()
    wait(lambda: window.current() == 1)
    page = window.pages[1]
    page.start()
    wait(lambda: page.stage == "run" and page.run_panel.data is not None
         and page.run_panel.data.first_steady_step is not None and len(page.run_panel.data.step.view()) > 40)
    shot("2-baseline-running")
    window.close()  # stops the run
    return 0


if __name__ == "__main__":
    sys.exit(main())
