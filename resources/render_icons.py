"""Render icons/tfturbo.svg to the PNG sizes desktops ask for (run after editing the SVG).

    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/render_icons.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

from resources import ICON_SIZES, ICON_SVG  # noqa: E402


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (QImage painting needs it)
    renderer = QSvgRenderer(str(HERE / ICON_SVG))
    if not renderer.isValid():
        raise SystemExit(f"{ICON_SVG}: not a valid SVG")
    for size in ICON_SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        out = HERE / f"icons/tfturbo-{size}.png"
        image.save(str(out))
        print("wrote", out.relative_to(HERE.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
