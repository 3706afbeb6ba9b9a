"""What an import reports: per-stream counts and files, malformed lines, skipped inputs, unmapped events."""

from __future__ import annotations

from pydantic import BaseModel, Field

MAX_LISTED = 1000  # malformed lines listed one by one; past that they are only counted


class Malformed(BaseModel):
    """A line that could not be imported: where it is and why."""

    file: str
    line: int
    reason: str


class Skipped(BaseModel):
    """An input (file or archive member) that holds nothing this importer reads, e.g. a pcap."""

    file: str
    reason: str


class InputReport(BaseModel):
    file: str
    format: str
    lines: int = 0
    events: int = 0
    malformed: int = 0


class ImportSummary(BaseModel):
    kind: str
    out_dir: str
    events: int = 0
    lines: int = 0
    streams: dict[str, int] = Field(default_factory=dict, description="documents written per data stream")
    files: dict[str, str] = Field(default_factory=dict, description="data stream -> NDJSON file written")
    inputs: list[InputReport] = Field(default_factory=list)
    malformed_count: int = 0
    malformed: list[Malformed] = Field(default_factory=list, description=f"the first {MAX_LISTED}")
    skipped: list[Skipped] = Field(default_factory=list)
    unmapped: dict[str, int] = Field(
        default_factory=dict,
        description="'channel/event id' -> events with no specific mapping, written to the forwarded stream",
    )
    elapsed_s: float = 0.0

    def index_specs(self) -> list[str]:
        """`NAME=PATH` per stream, sorted: what `soclab serve --index` takes."""
        return [f"{name}={path}" for name, path in sorted(self.files.items())]

    def index_line(self) -> str:
        return " ".join(self.index_specs())

    def add_malformed(self, file: str, line: int, reason: str) -> None:
        self.malformed_count += 1
        if len(self.malformed) < MAX_LISTED:
            self.malformed.append(Malformed(file=file, line=line, reason=reason))
