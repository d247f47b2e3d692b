"""The event protocol: what the backend writes, every reader can read back — and bad bytes never crash a reader."""

import io
import json
import math

from hypothesis import given, settings, strategies as st

from tfturbo import protocol
from tfturbo.protocol import EventWriter, LineParser, encode, iter_steps, parse_line


def test_writer_numbers_events_and_flushes_each_line():
    out = io.StringIO()
    w = EventWriter("r1", [out], clock=lambda: 100.0)
    w.emit("phase", phase="building")
    w.emit("steps", step=[1, 2], step_ms=[3.5, 4.0], loss=[None, 0.7])
    lines = out.getvalue().splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["seq"] for e in events] == [1, 2]
    assert all(e["v"] == protocol.PROTOCOL_VERSION and e["run"] == "r1" and e["t"] == 100.0 for e in events)
    assert list(iter_steps(events[1])) == [(1, 3.5, None, None), (2, 4.0, 0.7, None)]


def test_attached_sink_gets_earlier_events_replayed():
    stdout, file = io.StringIO(), io.StringIO()
    w = EventWriter("r", [stdout])
    w.emit("hello")
    w.attach(file)
    w.emit("done", status="completed")
    assert file.getvalue() == stdout.getvalue()
    assert [json.loads(x)["type"] for x in file.getvalue().splitlines()] == ["hello", "done"]


def test_broken_sink_is_dropped_and_others_keep_writing():
    class Broken(io.StringIO):
        def write(self, s):
            raise BrokenPipeError

    good = io.StringIO()
    w = EventWriter("r", [Broken(), good])
    w.emit("a")
    w.emit("b")
    assert len(good.getvalue().splitlines()) == 2


def test_nan_and_infinity_become_null_so_any_json_reader_accepts_the_line():
    line = encode({"type": "steps", "loss": [float("nan"), float("inf"), 1.0]})
    assert json.loads(line)["loss"] == [None, None, 1.0]


def test_parser_joins_lines_split_across_chunks_and_counts_garbage():
    p = LineParser()
    data = b'{"type":"a","seq":1}\nnot json\n{"type":"b"'
    events = p.feed(data[:10]) + p.feed(data[10:])
    assert [e["type"] for e in events] == ["a"]
    events = p.feed(b',"seq":2}\n[1,2]\n{"no_type":1}\n')
    assert [e["type"] for e in events] == ["b"]
    assert p.skipped == 3


def test_truncated_last_line_is_skipped_on_close():
    p = LineParser()
    p.feed(b'{"type":"a"}\n{"type":"b", "x": [1,')
    assert p.close() == []
    assert p.skipped == 1


def test_parse_line_rejects_non_objects():
    assert parse_line("") is None
    assert parse_line("3") is None
    assert parse_line('{"type": 3}') is None
    assert parse_line(b'{"type": "x"}') == {"type": "x"}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=20))
def test_parser_never_raises_on_arbitrary_bytes(chunks):
    p = LineParser()
    events = []
    for c in chunks:
        events += p.feed(c)
    events += p.close()
    assert all(isinstance(e, dict) and isinstance(e["type"], str) for e in events)
    total_lines = sum(1 for line in b"".join(chunks).split(b"\n") if line.strip())
    assert p.parsed + p.skipped == total_lines


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=50), st.integers(1, 7))
def test_round_trip_of_steps_through_arbitrary_chunking(values, chunk):
    out = io.StringIO()
    w = EventWriter("r", [out])
    w.emit("steps", step=list(range(len(values))), step_ms=values)
    data = out.getvalue().encode()
    p = LineParser()
    events = []
    for i in range(0, len(data), chunk):
        events += p.feed(data[i:i + chunk])
    assert len(events) == 1
    got = events[0]["step_ms"]
    assert [None if (v is None or not math.isfinite(v)) else v for v in values] == got
