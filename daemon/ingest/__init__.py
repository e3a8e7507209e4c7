"""Agent transcripts into the log: one parser per format, the tail that follows growing files,
the watchers, and the hook spool's ingestion."""
