"""Measurement: the plan (rows and distinct renders), the pipeline that turns renders into
scores, the tidy score records, thumbnails, cost estimates and re-measurement."""
