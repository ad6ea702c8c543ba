"""Native multimodal PDF parser (CPU): pypdfium2, pdfplumber, rapid-layout, rapidocr.

Models load lazily, once per process; importing this package does no work.
"""
from __future__ import annotations

from .parser import NativeParser

__all__ = ["NativeParser"]
