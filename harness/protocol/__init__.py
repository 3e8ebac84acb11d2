"""The measurement protocol: render configurations and c0 (``configurations.py``), factors'
levels and block cells (``levels.py``), profiles (``profiles.py``) and view policies
(``view_policies.py``)."""
