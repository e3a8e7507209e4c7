"""Transfer: copying the daemon's log into another database (``admin.copy``), ids and all."""
