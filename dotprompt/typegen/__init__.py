"""`dotprompt types`: a typed Python module for a prompt folder, and whether it is stale."""
