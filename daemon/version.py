"""Version numbers, kept apart so that reading them imports nothing."""

VERSION = "0.1.0"
# Bumped on any incompatible change to the wire protocol (docs/protocol.md).
PROTOCOL_VERSION = 1
