"""mistral/<model>: Mistral through Instructor's from_provider (pip install 'judgeflow[mistral]')."""

from __future__ import annotations

from .base import FromProvider


class Mistral(FromProvider):
    name = "mistral"
    prices_id = 'mistral'
    key_env = ("MISTRAL_API_KEY",)
    from_provider = ("mistralai", "mistral")
    error_modules = ()


PROVIDER = Mistral()
