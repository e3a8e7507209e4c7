"""A missing package of the otel extra is named as pip installs it, not as Python imports it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from daemon.otel.extra import INSTALL, missing


@pytest.mark.parametrize(
    ("module", "package"),
    [("google.protobuf", "protobuf"), ("opentelemetry.proto.trace", "opentelemetry-proto"), ("aiohttp", "aiohttp")],
)
def test_a_missing_module_is_named_by_its_package(module: str, package: str) -> None:
    assert missing(ImportError(name=module)) == f"the otel extra ({package} is not installed)"


def test_the_collector_without_protobuf_says_which_package_and_how() -> None:
    script = (
        "import sys\n"
        "sys.modules['google'] = None  # as if protobuf were not installed\n"
        "from daemon.otel.extra import missing\n"
        "try:\n"
        "    import daemon.export.collector\n"
        "except ImportError as exc:\n"
        "    print(missing(exc))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "the otel extra (protobuf is not installed)"
    assert INSTALL == "pip install 'toka[otel]'"
