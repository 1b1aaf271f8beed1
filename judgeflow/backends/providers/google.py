"""google/<model>: Gemini through Instructor's from_provider (pip install 'judgeflow[google]')."""

from __future__ import annotations

from .base import FromProvider


class Google(FromProvider):
    name = "google"
    prices_id = 'google'
    key_env = ("GOOGLE_API_KEY", "GEMINI_API_KEY",)
    from_provider = ("google.genai", "google")
    error_modules = ()


PROVIDER = Google()
