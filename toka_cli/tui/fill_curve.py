"""The session's context fill over its usage events: bars on a 0–100% axis with the warning and
critical thresholds marked, and under it the span of time it covers.

Each column is one usage event, or the largest of several when there are more events than
columns. A bar is coloured by the threshold it has crossed; where no bar reaches, the rows that
hold a threshold carry a dotted line in that threshold's colour, labelled on the axis.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from toka_cli.gists import tokens

# Eighths of a cell, for the top of a bar.
EIGHTHS = " ▁▂▃▄▅▆▇█"
AXIS = 5  # "100%" and the axis line
THRESHOLDS = (75.0, 90.0)


class FillCurve(Widget):
    DEFAULT_CSS = "FillCurve { height: 6; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data: list[float] = []  # the prompt size of each usage event, in tokens, oldest first
        self.window: int | None = None
        self.thresholds = THRESHOLDS
        self.span = ("", "")  # what the first and the last column stand for (their times)

    def show(
        self,
        data: list[float],
        window: int | None,
        thresholds: tuple[float, float] = THRESHOLDS,
        span: tuple[str, str] = ("", ""),
    ) -> None:
        self.data, self.window, self.thresholds, self.span = data, window, thresholds, span
        self.refresh()

    def columns(self, width: int) -> list[float]:
        """The fill of each column in percent (of the window, else of the largest prompt)."""
        if not self.data or width < 1:
            return []
        scale = self.window or max(self.data) or 1
        points = [min(100.0, 100 * value / scale) for value in self.data]
        if len(points) <= width:
            return points
        step = len(points) / width
        return [max(points[int(i * step) : max(int(i * step) + 1, int((i + 1) * step))]) for i in range(width)]

    def render(self) -> Text:
        rows = max(1, self.size.height - 1)
        width = max(1, self.size.width - AXIS)
        columns = self.columns(width)
        warning, critical = self.thresholds
        chart = Text(no_wrap=True, overflow="crop")
        for row in range(rows):
            low, high = 100 * (rows - 1 - row) / rows, 100 * (rows - row) / rows
            marks = [t for t in (critical, warning) if low <= t < high or (t >= 100 and row == 0)]
            mark_style = "red" if critical in marks else "yellow"
            chart.append_text(self._label(row, rows, marks, mark_style))
            for value in columns:
                style = "red" if value >= critical else "yellow" if value >= warning else "green"
                if value >= high:
                    chart.append("█", style=style)
                elif value > low:
                    chart.append(EIGHTHS[max(1, int((value - low) / (high - low) * 8))], style=style)
                else:
                    chart.append("┈" if marks else " ", style=mark_style)
            if marks and self.window:
                chart.append("┈" * (width - len(columns)), style=mark_style)
            chart.append("\n")
        chart.append_text(self._time_axis(width))
        return chart

    def _label(self, row: int, rows: int, marks: list[float], style: str) -> Text:
        if not self.window:
            top = tokens(int(max(self.data))) if self.data else ""
            return Text(f"{top if row == 0 else '':>4}│", style="dim")
        if marks:
            return Text(f"{marks[0]:>3.0f}%", style=style).append("┤", style="dim")
        label = "100%" if row == 0 else "  0%" if row == rows - 1 else ""
        return Text(f"{label:>4}│", style="dim")

    def _time_axis(self, width: int) -> Text:
        first, last = self.span
        middle = f" {len(self.data):,} usage events " if self.data else " no usage recorded "
        line = Text("    └", style="dim")
        room = width - len(first) - len(last) - 1
        if room >= len(middle) + 2:
            left = (room - len(middle)) // 2
            line.append(f"{first}{'─' * left}{middle}{'─' * (room - left - len(middle))}{last}", style="dim")
        elif room >= 0:
            line.append(f"{first}{'─' * room} {last}", style="dim")
        return line
