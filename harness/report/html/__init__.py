"""report.html: the page (``page``), the data it embeds (``data``), the overview and the strips of thumbnails."""
