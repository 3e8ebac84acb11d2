"""The measurement protocol: render configurations, c0, factors' levels, profiles and view
policies (``configurations.py``)."""
