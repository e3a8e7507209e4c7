"""The event log as the protocol serves it: appends, reads, streams, subscriptions, sessions,
verification and statistics (the log itself is the store's; see store/)."""
