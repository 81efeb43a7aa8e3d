"""The seed's four-ticket Pool, in Python.

T-3 needs T-1 and T-2; T-4 needs T-9, which does not exist. Each worker waits at a gate until a
person approves or rejects its ticket, so the example runs with no model and no tracker:

    jr2 run examples/tickets.py:machine          # in one terminal
    jr2 gates                                     # in another: T-1.review, T-2.review, source
    jr2 send T-1.review approve
    jr2 send T-2.review reject --input '{"reason": "Not now."}'

The run ends `deadlocked` (exit 3): T-4 can never start.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from jr2_core import Context, Next, define_event, pool, source


class Ticket(BaseModel):
    id: str
    title: str
    needs: list[str] = []


# A small backlog with dependencies. This list in memory is the issue tracker.
BACKLOG = [
    Ticket(id="T-1", title="Trim the name."),
    Ticket(id="T-2", title="Add a --version flag."),
    Ticket(id="T-3", title="Document the two changes.", needs=["T-1", "T-2"]),
    Ticket(id="T-4", title="Remove the old flag.", needs=["T-9"]),
]


def make_machine(backlog: list[Ticket] | None = None) -> Any:
    """Build the Pool over a fresh in-memory claim set (one per run)."""
    tickets = list(backlog or BACKLOG)
    claimed: set[str] = set()

    def next_ticket(active: list[str]) -> Next:
        def done(tid: str) -> bool:
            return tid in claimed and tid not in active

        waiting = [t for t in tickets if t.id not in claimed]
        ready = next((t for t in waiting if all(done(n) for n in t.needs)), None)
        if ready is None:
            return Next(item=None, open=len(waiting))
        claimed.add(ready.id)
        return Next(item=ready, open=len(waiting) - 1)

    tickets_changed = define_event(
        name="tickets_changed",
        description="The backlog changed. Look for ready tickets again.",
        audience="external",
    )

    approve = define_event(name="approve", description="Accept the ticket.")

    class RejectInput(BaseModel):
        reason: str = Field(description="Why, in one sentence.")

    reject = define_event(name="reject", description="Refuse the ticket.", input=RejectInput)

    async def review(ticket: Ticket, ctx: Context) -> dict[str, str]:
        event = await ctx.gate("review", accepts=[approve, reject], meta={"title": ticket.title})
        if event.name == "approve":
            return {"id": ticket.id, "outcome": "approved"}
        assert isinstance(event.data, RejectInput)
        return {"id": ticket.id, "outcome": "rejected", "reason": event.data.reason}

    return pool(
        review,
        id="tickets",
        source=source(next_ticket, wake=tickets_changed),
        item_id=lambda t: t.id,
        cap=2,
    )


machine = make_machine()
