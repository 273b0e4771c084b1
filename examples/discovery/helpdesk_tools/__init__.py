"""The helpdesk's tools, found by discovery: every marked function of every module here."""
