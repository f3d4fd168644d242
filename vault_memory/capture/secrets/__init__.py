"""The detectors behind capture/redact.py, one family of evidence a module."""
