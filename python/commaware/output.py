"""Files written while a replay runs: the per-message table (Parquet or CSV, via pyarrow),
written batch by batch, and a helper that puts any output in place only once it is complete.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import pandas as pd

MESSAGE_FORMATS = (".parquet", ".csv")


def partial_path(path: Path) -> Path:
    """Where `path` is written until it is complete (same folder, so the rename is atomic).

    Created with the usual mode (umask applies), unlike `tempfile`'s 0600 files.
    """
    return path.with_name(f".{path.name}.{os.getpid()}.partial")


def requested_names(text: str) -> str:
    """`text` (an error message) with each partial file's name (`partial_path`) replaced by the
    name of the file the user asked for: `/d/.out.parquet.4242.partial` -> `/d/out.parquet`."""
    import re

    return re.sub(r"\.([^/\\\s'\"]+)\.[0-9]+\.partial\b", r"\1", text)


def deliver(write: Callable[[Path], None], output: str | Path | None) -> None:
    """Write a document with `write(path)` into a partial file, then move it to `output`, or
    copy it to stdout when `output` is None. Nothing appears unless `write` succeeded."""
    import shutil
    import sys
    import tempfile

    # A file that does not exist yet, in a private folder: an existing one (mkstemp's) would be
    # truncated on open, and ext4 then writes all its data back when it is closed, which kept
    # a Ctrl-C of `simulate --json` waiting for the disk (0.2 s for 450 MB here, 1.5 s on CI).
    folder = Path(tempfile.mkdtemp(prefix="commaware-")) if output is None else None
    partial = folder / "document.json" if folder is not None else partial_path(Path(output))
    try:
        write(partial)
        if output is None:
            with open(partial) as doc:
                shutil.copyfileobj(doc, sys.stdout)
        else:
            os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)
        if folder is not None:
            folder.rmdir()


class MessageFile:
    """Writes message batches (DataFrames from `commaware.simulate(on_messages=...)`) to a
    .parquet or .csv file as they arrive. Call `close()` on success, `discard()` on failure:
    the file appears only when complete."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.format = self.path.suffix.lower()
        if self.format not in MESSAGE_FORMATS:
            raise ValueError(f"{path}: the message table must be .parquet or .csv")
        self.partial = partial_path(self.path)
        self._writer: Any = None
        self.rows = 0

    def _open(self, schema: Any) -> None:
        if self.format == ".parquet":
            import pyarrow.parquet as pq

            self._writer = pq.ParquetWriter(self.partial, schema)
        else:
            import pyarrow.csv as pacsv

            self._writer = pacsv.CSVWriter(self.partial, schema)

    def __call__(self, frame: pd.DataFrame) -> None:
        import pyarrow as pa

        table = pa.Table.from_pandas(frame, preserve_index=False)
        if self._writer is None:
            self._open(table.schema)
        self._writer.write_table(table)
        self.rows += len(frame)

    def close(self, host_names: list[str]) -> None:
        """Finish the file (an empty table with the columns when there were no messages)."""
        if self._writer is None:
            from .api import MESSAGE_DTYPES, message_frame

            self(message_frame({k: b"" for k in MESSAGE_DTYPES}, host_names))
        self._writer.close()
        os.replace(self.partial, self.path)

    def discard(self) -> None:
        """Drop the partial file, if any is left (after `close`, nothing is)."""
        if not self.partial.exists():
            return
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception:  # noqa: BLE001 - the file is dropped anyway
                pass
        self.partial.unlink(missing_ok=True)
