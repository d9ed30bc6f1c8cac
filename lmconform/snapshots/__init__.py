"""Snapshots of the shape of every case's answer, per server version, kept with syrupy and compared with
`lmconform snapshots diff`."""

from lmconform.snapshots.extension import ShapeSnapshotExtension, shape_extension, snapshot_folder, snapshot_root
from lmconform.snapshots.shape import shape_of

__all__ = ["ShapeSnapshotExtension", "shape_extension", "shape_of", "snapshot_folder", "snapshot_root"]
