"""Regenerate the wizard screenshots in this folder: one real study, every page at 1280×800 and 1024×640.

    xvfb-run -s "-screen 0 1280x800x24" .venv/bin/python docs/screenshots/capture.py

Each page is saved at 1280×800 here and at 1024×640 (the smallest window
the wizard supports) in `1024x640/`.

Runs the real backend (`python -m trainer_backend`) on a built-in workload,
clicks through the pages as a user would, and saves each page as PNG. Under
an X server (Xvfb) it also saves what the X server shows (`screen.png`), to
check that the window renders the same outside the offscreen platform.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from PIL import Image  # noqa: E402  (pillow comes with reportlab, a dependency of the report)

from tfturbo_gui.app import make_app  # noqa: E402


def save_small(pixmap, path: Path) -> None:
    """A 256-colour PNG: a fraction of the size, and the UI's few flat colours survive exactly."""
    pixmap.save(str(path))
    image = Image.open(path).convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                                                     dither=Image.Dither.NONE)
    image.save(path, optimize=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="builtin:fp16-softmax-head")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--running-workload", default="builtin:transformer",
                        help="workload for the screenshot of a run in progress")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    app = make_app()
    from tfturbo_gui.main_window import MainWindow

    window = MainWindow(args.workload, steps=args.steps)
    window.resize(1280, 800)
    window.move(0, 0)
    window.show()

    def wait(cond, timeout: float = 600) -> None:
        end = time.time() + timeout
        while not cond():
            if time.time() > end:
                raise TimeoutError("the page did not finish in time")
            app.processEvents()
            time.sleep(0.02)

    def settle() -> None:
        for _ in range(15):  # let the plots' timer repaint
            app.processEvents()
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
    pages[0].study_edit.setText(str(Path(tempfile.mkdtemp()) / "study"))
    wait(lambda: window.session.environment is not None)
    shot("1-workload")
    window._on_next()
    wait(lambda: window.current() == 1)
    pages[1].start()
    wait(lambda: pages[1].measure_button.isEnabled())
    shot("2-baseline")
    window._on_next()
    wait(lambda: window.current() == 2 and pages[2].run_button.isEnabled())
    pages[2].start_run()
    wait(lambda: pages[2].rung.decision is not None)
    shot("3-mixed-precision")
    window._on_next()
    wait(lambda: window.current() == 3 and pages[3].run_button.isEnabled())
    pages[3].start_run()
    wait(lambda: pages[3].rung.decision is not None)
    shot("4-xla")
    window._on_next()
    wait(lambda: window.current() == 4)
    if pages[4].candidate() is not None:  # something was kept: confirm it against the baseline
        shot("5-compare-needs-confirmation")
        pages[4].start_run()
        wait(lambda: pages[4].confirmation is not None and pages[4].confirmation.decision is not None)
    shot("5-compare")
    window._on_next()
    shot("6-batch-size")
    window._on_next()
    shot("7-record-report")
    if app.platformName() == "xcb":
        settle()
        save_small(app.primaryScreen().grabWindow(0), args.out / "screen.png")
        print("saved screen (the X server's framebuffer)", flush=True)
    browser = window.show_browser()
    browser.resize(1280, 800)
    browser.open_study(window.session.study.path)
    settle()
    save_small(browser.grab(), args.out / "8-run-browser.png")
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
