"""`Duration`, the pydantic field type of durations: every spelling `parse_duration` reads, and
its error words, through pydantic."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from jr2_sources.kit.durations import Duration

DURATION: TypeAdapter[float] = TypeAdapter(Duration)


@pytest.mark.parametrize(("given", "seconds"), [
    ("5s", 5.0), ("1m", 60.0), ("0.05s", 0.05), ("1h30m", 5400.0), ("1.5h", 5400.0),
    ("2d", 172800.0), (" 10 m ", 600.0), ("90", 90.0), (90, 90.0), (0.5, 0.5),
])
def test_every_spelling_is_seconds(given: object, seconds: float) -> None:
    assert DURATION.validate_python(given) == pytest.approx(seconds)


@pytest.mark.parametrize(("given", "words"), [
    ("soon", "'soon' is not a duration like 30s, 10m or 1h"),
    ("0s", "a duration must be more than 0 seconds"),
    (True, "expected a duration like 30s, 10m or 1h"),
    ("99999d", "'99999d' is longer than the longest duration jr2 takes (3650d)"),
])
def test_bad_durations_say_why(given: object, words: str) -> None:
    with pytest.raises(ValidationError) as info:
        DURATION.validate_python(given)
    assert words in str(info.value)
