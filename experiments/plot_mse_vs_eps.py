#!/usr/bin/env python3
"""Plots test MSE against epsilon per method as an SVG (no third-party modules).

Usage: plot_mse_vs_eps.py TITLE OUT.svg < rows
Each input row: `series epsilon mse` (epsilon may be `inf`, drawn at the right
edge), or `hline label mse` for a horizontal reference (local-only, central).
"""
import math
import sys

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def main():
    title, out = sys.argv[1], sys.argv[2]
    series, hlines = {}, []
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 3:
            continue
        if parts[0] == "hline":
            hlines.append((parts[1], float(parts[2])))
        else:
            series.setdefault(parts[0], []).append((float(parts[1]), float(parts[2])))
    finite = [e for pts in series.values() for e, _ in pts if math.isfinite(e)]
    lo, hi = math.log2(min(finite)), math.log2(max(finite)) + 1  # one slot for inf
    ys = [m for pts in series.values() for _, m in pts] + [m for _, m in hlines]
    ymin, ymax = min(ys), max(ys)
    pad = 0.05 * (ymax - ymin or 1)
    ymin, ymax = ymin - pad, ymax + pad
    w, h, left, right, top, bottom = 640, 360, 60, 150, 30, 40

    def x(e):
        v = hi if not math.isfinite(e) else math.log2(e)
        return left + (v - lo) / (hi - lo) * (w - left - right)

    def y(m):
        return top + (ymax - m) / (ymax - ymin) * (h - top - bottom)

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="{w / 2 - 60}" y="18" font-size="13">{title}</text>',
           f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="black"/>']
    ticks = sorted({e for pts in series.values() for e, _ in pts})
    for e in ticks:
        label = "∞" if not math.isfinite(e) else f"{e:g}"
        svg.append(f'<text x="{x(e) - 6}" y="{h - bottom + 15}">{label}</text>')
    svg.append(f'<text x="{(w - right) / 2}" y="{h - 5}">ε (per party, δ = 1e-5)</text>')
    for k in range(5):
        m = ymin + k * (ymax - ymin) / 4
        svg.append(f'<text x="8" y="{y(m) + 4}">{m:.3f}</text>')
    svg.append(f'<text x="8" y="{top - 8}">test MSE</text>')
    for i, (label, m) in enumerate(hlines):
        svg.append(f'<line x1="{left}" y1="{y(m)}" x2="{w - right}" y2="{y(m)}" stroke="gray" '
                   f'stroke-dasharray="4,3"/>')
        svg.append(f'<text x="{w - right + 5}" y="{y(m) + 4}" fill="gray">{label}</text>')
    for i, (name, pts) in enumerate(series.items()):
        pts.sort(key=lambda p: p[0])
        c = COLORS[i % len(COLORS)]
        path = " ".join(f"{x(e):.1f},{y(m):.1f}" for e, m in pts)
        svg.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"/>')
        for e, m in pts:
            svg.append(f'<circle cx="{x(e):.1f}" cy="{y(m):.1f}" r="3" fill="{c}"/>')
        # Legend in the right margin, bottom up (the reference labels sit at
        # their own heights, usually near the top and the bottom of the plot).
        legend_y = (h - bottom) / 2 + 14 * i
        svg.append(f'<text x="{w - right + 5}" y="{legend_y:.0f}" fill="{c}">{name}</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
