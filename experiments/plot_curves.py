"""Learning curves of runs as a PNG (numpy only, like the project's renderers): a TensorBoard
scalar of each run against the games the run had played (millions, all boards: the step
``training.Run`` logs at), one colour a run, digits on the axes.

Run from the repository root:
`python -m tablegym.experiments.plot_curves OUT.png TAG RUN [RUN ...] [--range LO HI] [--unit U] [--smooth K]`, e.g.
`python -m tablegym.experiments.plot_curves results/rl/ppo_curves.png eval/return_vs_random runs/trap-tgppo runs/trilobite-tgppo`.
The y axis spans [LO, HI] (default [-1, 1], returns of two-player games), labelled in multiples
of U; ``--smooth K`` plots the running mean of K logged points (a noisy score). The caption in the
README that shows the image names the colours.
"""

from __future__ import annotations

import argparse
import struct
import zlib
from pathlib import Path

import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from tablegym.envs.render import text_mask

COLOURS = [(200, 40, 40), (40, 90, 200), (40, 150, 60), (160, 80, 170)]
W, H, LEFT, BOTTOM, TOP, RIGHT = 640, 320, 40, 30, 12, 12


def write_png(path: str | Path, img: np.ndarray) -> Path:
    """``img`` (H x W x 3 uint8) as an 8-bit RGB PNG, no filtering, zlib level 6 (the same bytes as
    Starship's ``write_png``, which a module outside a game's folder does not import)."""
    img = np.ascontiguousarray(img)
    h, w = img.shape[:2]
    raw = np.concatenate([np.zeros((h, 1), np.uint8), img.reshape(h, w * 3)], axis=1).tobytes()

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    path = Path(path)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
    return path


def series(run: str, tag: str) -> tuple[np.ndarray, np.ndarray]:
    """(games played, value); a resumed run that logged a game count again keeps its last value."""
    events = EventAccumulator(run)
    events.Reload()
    last = {p.step: p.value for p in events.Scalars(tag)}
    games = np.array(sorted(last), dtype=float)
    return games, np.array([last[g] for g in sorted(last)])


def plot(out: str, tag: str, runs: list[str], lo: float = -1.0, hi: float = 1.0, unit: float = 1.0, smooth: int = 1) -> None:
    img = np.full((H, W, 3), 255, dtype=np.uint8)
    data = [series(r, tag) for r in runs]
    if smooth > 1:
        kernel = np.ones(smooth) / smooth
        data = [(s[smooth - 1 :], np.convolve(v, kernel, mode="valid")) for s, v in data if len(v) >= smooth]
    xmax = max(float(s.max()) for s, _ in data) or 1.0
    x0, x1, y0, y1 = LEFT, W - RIGHT, H - BOTTOM, TOP

    def px(x: float, y: float) -> tuple[int, int]:
        return int(round(x0 + (x1 - x0) * x / xmax)), int(round(y0 + (y1 - y0) * (y - lo) / (hi - lo)))

    for y in np.linspace(lo, hi, 5):  # gridlines
        _, r = px(0, y)
        img[r, x0:x1] = 220 if y else 150
    img[y1:y0, x0] = 0
    img[y0, x0:x1] = 0
    for y in np.linspace(lo, hi, 3):
        _, r = px(0, y)
        mask = text_mask(str(int(round(abs(y) / unit))), 2)
        img[r - 5 : r + 5, 8 : 8 + mask.shape[1]][mask] = 0
        if y < 0:  # a minus sign before a negative label
            img[r, 2:6] = 0
    millions = int(xmax // 1e6)
    for m in range(0, millions + 1, max(1, millions // 8)):
        c, _ = px(m * 1e6, -1)
        img[y0 : y0 + 4, c] = 0
        mask = text_mask(str(m), 2)
        img[y0 + 8 : y0 + 18, c - mask.shape[1] // 2 : c - mask.shape[1] // 2 + mask.shape[1]][mask] = 0
    for (steps, values), colour in zip(data, COLOURS):
        pts = [px(s, float(np.clip(v, lo, hi))) for s, v in zip(steps, values)]
        for (ca, ra), (cb, rb) in zip(pts, pts[1:]):
            n = max(abs(cb - ca), abs(rb - ra), 1)
            for t in np.linspace(0, 1, n + 1):
                c, r = int(round(ca + (cb - ca) * t)), int(round(ra + (rb - ra) * t))
                img[r - 1 : r + 2, c - 1 : c + 2] = colour
    write_png(out, img)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("tag")
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--range", nargs=2, type=float, default=(-1.0, 1.0), metavar=("LO", "HI"))
    parser.add_argument("--unit", type=float, default=1.0, help="axis labels count multiples of this")
    parser.add_argument("--smooth", type=int, default=1, help="running mean of this many logged points")
    a = parser.parse_args(argv)
    plot(a.out, a.tag, a.runs, *a.range, unit=a.unit, smooth=a.smooth)


if __name__ == "__main__":
    main()
