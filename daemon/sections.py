"""Every section of config.toml, in the order `toka config show` lists them: the daemon's own two
(daemon/config.py) and each component's, declared in its package. The one module of daemon/'s
root above the components: the daemon resolves its settings with it, `toka config`, doctor and
the man page list them with it. The client reads only the daemon's own (``OWN_SECTIONS``).
"""

from __future__ import annotations

from daemon.alerts.settings import AlertSettings
from daemon.compress.settings import CompressionSettings
from daemon.config import DaemonSettings, Sections, StoreSettings
from daemon.cost.settings import ModelSettings
from daemon.export.settings import OtlpExportSettings
from daemon.handoff.settings import HandoffSettings
from daemon.ingest.settings import WatchSettings
from daemon.inject.settings import InjectSettings
from daemon.lifecycle.settings import LifecycleSettings
from daemon.memory.settings import PoolSettings
from daemon.otel.settings import OtelSettings
from daemon.recall.settings import RecallSettings
from daemon.redact.settings import RedactionSettings

SECTIONS = Sections(
    StoreSettings,
    DaemonSettings,
    LifecycleSettings,
    HandoffSettings,
    InjectSettings,
    CompressionSettings,
    RedactionSettings,
    ModelSettings,
    PoolSettings,
    WatchSettings,
    RecallSettings,
    AlertSettings,
    OtelSettings,
    OtlpExportSettings,
    other_tables=("state",),  # read by daemon/states/machines.py
)
