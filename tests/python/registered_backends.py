"""Backend names as tests and docs checks take them: from the engine's backend registry, never
written out, so that a backend added to the registry is tested and must be documented with the rest."""

from kscope import _core


def python_backends():
    """backend='s choices, in the registry's order."""
    return [d.python_name for d in _core.backends() if d.python_name]


def duration_backends():
    """The backend= choices that measure one duration of their own: those the default backend
    (Backend.from_metrics) chooses for that metric alone."""
    found = []
    for d in _core.backends():
        if not d.python_name or len(d.default_metrics) != 1:
            continue
        settings = _core.Settings()
        settings.backend = _core.Backend.from_metrics
        settings.metrics = list(d.default_metrics)
        if _core.chosen_backend(settings) == d.backend:
            found.append(d.python_name)
    return found
