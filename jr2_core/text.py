"""Text from outside (trackers, commands, people) made safe to print on a terminal.

Ids, titles, labels and failure reasons can hold anything. Printed raw, control characters
would drive the reader's terminal (ESC/CSI/OSC sequences set the window title, clear the screen,
hide a link; BEL rings), a newline would break a line-based table, and bidi overrides would
reorder what a reader sees. Every human-facing output blanks them; JSON output keeps text
exactly.
"""

from __future__ import annotations

# C0 and C1 controls, DEL, the line and paragraph separators, and the bidi embeddings,
# overrides and isolates
_CONTROL = {i: " " for i in [*range(32), 127, *range(0x80, 0xA0), 0x2028, 0x2029,
                              *range(0x202A, 0x202F), *range(0x2066, 0x206A)]}
_CONTROL_KEEP_NL = {k: v for k, v in _CONTROL.items() if k != ord("\n")}


def one_line(text: str) -> str:
    """`text` on one line, every control character blanked."""
    return text.translate(_CONTROL)


def terminal_safe(text: str) -> str:
    """Multi-line `text` for a terminal: every control character but the newline blanked."""
    return text.translate(_CONTROL_KEEP_NL)
