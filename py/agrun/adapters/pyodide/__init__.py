"""The bridge between agrun and JavaScript. Only this package knows Pyodide."""
