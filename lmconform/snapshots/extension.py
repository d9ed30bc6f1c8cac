"""Where shapes are kept: one readable JSON file per case, in one folder per server and version.

    fixtures/snapshots/<server>-<version>/<api>/<slug>.json

syrupy compares and, with `--snapshot-update`, writes them; a shape that changed fails with syrupy's line diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from syrupy.data import SnapshotCollections
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.location import PyTestLocation
from syrupy.types import SerializableData, SerializedData, SnapshotIndex

from lmconform.target import Target
from lmconform.wire.redact import redact_text

SNAPSHOT_DIR_ENV = "LMCONFORM_SNAPSHOT_DIR"
# Relative to where the suite runs: a user's own project keeps the shapes of the servers it tests.
DEFAULT_SNAPSHOT_ROOT = Path("fixtures") / "snapshots"
UNKNOWN_VERSION = "unknown"


def snapshot_root() -> Path:
    """`$LMCONFORM_SNAPSHOT_DIR`, else fixtures/snapshots in the current folder."""
    return Path(os.environ.get(SNAPSHOT_DIR_ENV) or DEFAULT_SNAPSHOT_ROOT)


def _folder_part(text: str) -> str:
    # A label is free text ("localhost:1234", "LM Studio"); a folder name must be one safe path component.
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-") or "-"


def snapshot_folder(target: Target, root: Path | None = None) -> Path:
    """The folder of `target`'s server and version: `<root>/<server>-<version>`."""
    version = target.server_version or UNKNOWN_VERSION
    return (root or snapshot_root()) / f"{_folder_part(target.label)}-{_folder_part(version)}"


class ShapeSnapshotExtension(JSONSnapshotExtension):
    """Files named by case, not by test: assert with `snapshot(name=case.id)`.

    `folder` and `secrets` are set on a subclass made by `shape_extension`, since syrupy builds extensions
    without arguments.
    """

    folder: Path
    secrets: tuple[str, ...] = ()

    @classmethod
    def get_location(cls, *, test_location: PyTestLocation, index: SnapshotIndex) -> str:
        if not isinstance(index, str) or index.count("/") != 1:
            raise TypeError(f"shape snapshots are named by case id: snapshot(name='<api>/<slug>'), not {index!r}")
        api, slug = index.split("/")
        return str(cls.folder / api / f"{slug}.{cls.file_extension}")

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: SnapshotIndex = 0) -> str:
        return f"{test_location.methodname}[{index}]"

    @classmethod
    def matches_test_location(cls, *, test_location: PyTestLocation, snapshot_location: str) -> bool:
        return Path(snapshot_location).is_relative_to(cls.folder)

    def discover_snapshots(
        self, *, test_location: PyTestLocation, ignore_extensions: list[str] | None = None
    ) -> SnapshotCollections:
        # syrupy finds unused snapshots by matching file names to test modules; these files are named after
        # cases, so every one would look unused and be deleted by --snapshot-update. A case that is gone shows
        # up as `removed` in `lmconform snapshots diff` instead.
        return SnapshotCollections()

    def serialize(self, data: SerializableData, **options) -> SerializedData:
        """Indented JSON with sorted keys; a shape holds no secret by construction, this makes it certain."""
        text = super().serialize(data, **options)
        return redact_text(text.decode("utf-8") if isinstance(text, bytes) else text, self.secrets)


def shape_extension(folder: Path, secrets: tuple[str, ...] = ()) -> type[ShapeSnapshotExtension]:
    """The extension class that keeps shapes in `folder`, with `secrets` never written."""
    return type(ShapeSnapshotExtension.__name__, (ShapeSnapshotExtension,), {"folder": folder, "secrets": secrets})
