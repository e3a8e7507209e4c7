"""Memory the daemon keeps for agents: the durable, scoped memory of entries (a projection of the
log) and the volatile memory pool (LRU + TTL, pressure levels)."""
