"""The daemon: socket server, protocol, group commit, subscriptions, and the clients that speak to it.

Nothing is imported here: ``daemon.client.sync`` must stay fast to import for hooks and the CLI.
"""
