"""``export_parquet(store, path)``: a store's messages and audit entries as Parquet files, for
DuckDB, Polars, Spark or pandas (extra ``parquet``: pyarrow).

Two files in the directory ``path``: ``messages.parquet`` (one row per message at its latest
state: ``conversation_id``, ``seq``, ``id``, ``kind``, ``timestamp``, ``data_json``) and
``entries.parquet`` (the audit trail: ``conversation_id``, ``seq``, ``id``, ``message_id``,
``decision``, ``timestamp``, ``hash``, ``body``, the canonical JSON the hash covers). JSON stays
JSON text, which each of those readers can parse (DuckDB: ``data_json::JSON ->> '$.type'``).
Rows are read and written in batches, so the export runs in bounded memory.
"""

from __future__ import annotations

import os
from pathlib import Path

from msgwire.errors import MissingExtraError

from .reads import MessageReads

try:
    import pyarrow as pa  # type: ignore[import-untyped]  # no stubs
    import pyarrow.parquet as pq  # type: ignore[import-untyped]
except ImportError as exc:
    raise MissingExtraError("msgwire.harness.store.parquet", "parquet", exc) from None

__all__ = ["ENTRIES_SCHEMA", "MESSAGES_SCHEMA", "export_parquet"]

_TIME = pa.timestamp("us", tz="UTC")
MESSAGES_SCHEMA = pa.schema(
    [
        ("conversation_id", pa.string()),
        ("seq", pa.int64()),
        ("id", pa.string()),
        ("kind", pa.string()),
        ("timestamp", _TIME),
        ("data_json", pa.string()),
    ]
)
ENTRIES_SCHEMA = pa.schema(
    [
        ("conversation_id", pa.string()),
        ("seq", pa.int64()),
        ("id", pa.string()),
        ("message_id", pa.string()),
        ("decision", pa.string()),
        ("timestamp", _TIME),
        ("hash", pa.string()),
        ("body", pa.string()),
    ]
)


def export_parquet(
    store: MessageReads,
    path: str | os.PathLike[str],
    *,
    conversation_id: str | None = None,
    batch: int = 10_000,
    compression: str = "zstd",
) -> tuple[Path, Path]:
    """Write ``messages.parquet`` and ``entries.parquet`` into the directory ``path`` (made
    when missing) for every conversation of ``store`` (or one); returns the two paths."""
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for table, schema in (("messages", MESSAGES_SCHEMA), ("entries", ENTRIES_SCHEMA)):
        target = folder / f"{table}.parquet"
        with pq.ParquetWriter(target, schema, compression=compression) as writer:
            for rows in store.iter_rows(table, conversation_id=conversation_id, batch=batch):  # type: ignore[arg-type]
                columns = list(zip(*rows, strict=True))
                writer.write_table(
                    pa.Table.from_arrays(
                        [pa.array(c, f.type) for c, f in zip(columns, schema, strict=True)], schema=schema
                    )
                )
        written.append(target)
    return written[0], written[1]
