"""One audit run under pytest: options, the run's state and its parts (inputs, records,
summaries, human agreement, cards, ids, searches), xdist aggregation and the run's last lines."""
