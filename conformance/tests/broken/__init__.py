"""Deliberately broken implementations, one module per law they break (named after it).

Each is small and breaks its law the way real code does; the kit's own tests assert that the kit
reports FAIL on exactly that law. Most registries wrap the reference Registry
(:class:`~broken._delegate.Delegating`) and change one behaviour.
"""
