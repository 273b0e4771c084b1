"""Example plugins for the toolbox server: each one a ToolHandler and an ArgumentFilter."""
