"""The bench wing: what ``msgwire bench`` times, and the one copy the benches/ suite reads.

- ``workloads.py``: the streams and the session, generated from fixed seeds;
- ``forms.py``: the session as hand-written msgspec Structs (the baseline);
- ``peers.py``: the mock transport and the loops people write by hand;
- ``cases.py``: each group's entries, every result checked against msgwire's;
- ``measure.py``, ``report.py``, ``plot.py``: the timing, the table and JSON, the chart.

The wing stands on the wire layer and ``interop/`` (the pydantic-ai entries time the conversion
msgwire ships); only ``msgwire.cli.bench`` and benches/ import it (tests/test_layout.py).
"""
