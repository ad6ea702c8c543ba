"""Stores: artifacts (renders, crops), catalog (SQLite), dense (Milvus), pages, graph."""
