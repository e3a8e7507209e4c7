"""The daemon process: the socket server, the op registry, the JSON wire shapes, the
subscription hub and the group committer."""
