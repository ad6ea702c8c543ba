"""One MiniLM load for every embed test (about 8 s on 2 cores)."""
import pytest

from docray.engine.config import TextEncoderConfig


@pytest.fixture(scope="session")
def minilm():
    from docray.engine.embed.minilm import MiniLMEncoder

    return MiniLMEncoder(TextEncoderConfig(batch_size=4))
