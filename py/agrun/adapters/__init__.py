"""Adapters at the edge: the only modules that may touch time, ids, I/O or Pyodide."""
