"""One module per command group; each command parses, makes one call, renders."""
