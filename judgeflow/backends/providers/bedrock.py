"""bedrock/<model>: AWS Bedrock through Instructor's from_provider (pip install 'judgeflow[bedrock]')."""

from __future__ import annotations

from .base import FromProvider


class Bedrock(FromProvider):
    name = "bedrock"
    prices_id = 'aws'
    key_env = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",)
    from_provider = ("boto3", "bedrock")
    error_modules = ("botocore",)


PROVIDER = Bedrock()
