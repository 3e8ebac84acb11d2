"""Ray backend: the connection (`cluster`), render actors (`render`) and scoring actors (`score`)."""
