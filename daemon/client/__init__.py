"""The client side, run in the CLI's and the hook's process: sockets to the daemon, the sync
and async clients, starting the daemon, the hook spool's writer, imports through the client.

Nothing here imports the server side (daemon/server/ or the components it runs)."""
