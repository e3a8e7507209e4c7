"""The dashboard's screens: overview, one session, handoffs, search and memory."""
