"""``python -m daemon``: run the daemon in the foreground (what autostart spawns)."""

from daemon.server.main import main

main()
