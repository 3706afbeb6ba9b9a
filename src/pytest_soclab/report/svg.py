"""Small inline SVG charts (no script, nothing fetched): interval bars and score bars."""

from __future__ import annotations

from html import escape


def interval_bar(value: float, lower: float, upper: float, *, width: int = 220, height: int = 18) -> str:
    """A 0..1 bar: the value as a filled bar, its confidence interval as a whisker."""
    def x(v: float) -> float:
        return round(max(0.0, min(1.0, v)) * (width - 2) + 1, 1)

    colour = "#2e7d32" if value >= 0.75 else "#f9a825" if value >= 0.5 else "#c62828"
    return (
        f'<svg class="soclab-bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{value:.2f} [{lower:.2f}, {upper:.2f}]">'
        f'<rect x="0.5" y="0.5" width="{width - 1}" height="{height - 1}" fill="#f4f4f4" stroke="#bbb"/>'
        f'<rect x="1" y="4" width="{x(value) - 1}" height="{height - 8}" fill="{colour}"/>'
        f'<line x1="{x(lower)}" x2="{x(upper)}" y1="{height / 2}" y2="{height / 2}" stroke="#222" stroke-width="1.5"/>'
        f'<line x1="{x(lower)}" x2="{x(lower)}" y1="3" y2="{height - 3}" stroke="#222"/>'
        f'<line x1="{x(upper)}" x2="{x(upper)}" y1="3" y2="{height - 3}" stroke="#222"/>'
        "</svg>"
    )


def badge(label: str, value: str, colour: str) -> str:
    lw, vw = 8 * len(label) + 14, 8 * len(value) + 14
    return (
        f'<svg class="soclab-badge" width="{lw + vw}" height="26" role="img" aria-label="{escape(label)}: {escape(value)}">'
        f'<rect width="{lw}" height="26" rx="4" fill="#444"/><rect x="{lw}" width="{vw}" height="26" rx="4" fill="{colour}"/>'
        f'<rect x="{lw - 4}" width="8" height="26" fill="{colour}"/>'
        f'<text x="{lw / 2}" y="17" fill="#fff" font-family="monospace" font-size="13" text-anchor="middle">{escape(label)}</text>'
        f'<text x="{lw + vw / 2}" y="17" fill="#fff" font-family="monospace" font-size="13" font-weight="bold" '
        f'text-anchor="middle">{escape(value)}</text></svg>'
    )
