"""Recordings -> ECS documents, as Elastic's integrations map them (Windows/Sysmon/Security, Sysmon for Linux,
Zeek). Knows only pytest_soclab.models and pytest_soclab.errors.

    from pytest_soclab.importers import import_files
    summary = import_files("otrf", ["recording.zip"], "out/")
    summary.streams        # {"logs-windows.sysmon_operational-default": 1234, ...}
    summary.index_line()   # "NAME=PATH ..." for `soclab serve --index`
"""

from pytest_soclab.importers.api import KINDS, import_files
from pytest_soclab.importers.summary import ImportSummary, InputReport, Malformed, Skipped

__all__ = ["KINDS", "ImportSummary", "InputReport", "Malformed", "Skipped", "import_files"]
