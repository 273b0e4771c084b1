"""Plugins found by discovery in the end-to-end tests; none of them may be imported unless called."""
