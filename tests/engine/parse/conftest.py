"""Fixtures for the parser tests; the builders live in native_pdfs.py."""
from native_pdfs import (  # noqa: F401 - fixtures are registered by import
    borderless_table_pdf, cash_flow_pdf, equation_pdf, figure_pdf, justified_beside_table_pdf,
    multi_page_pdf, scanned_pdf, side_by_side_pdf, statement_pdf, table_pdf, tight_columns_pdf, two_column_pdf,
)
