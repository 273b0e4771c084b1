"""The kit's checks: one test per law, in files the plugin adds to a session by explicit path.

They are collected only under ``--mcp-conformance`` (and whatever a project's ``python_files``,
``python_functions`` or ``testpaths`` say); nothing here is meant to be imported otherwise.
"""
